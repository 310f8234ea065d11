// Reporters render a Report. They see nothing else; every reporter shows non-zero diagnostics.
#pragma once

#include <string>

#include "base/status.h"
#include "report/report.h"

namespace sightline {

struct TextReportOptions {
  int width = 120;  // terminal columns the tables are fitted to
};

std::string RenderTextReport(const Report& report, const TextReportOptions& options = {});
// JSON with "schema_version"; layout documented in docs/formats/report-json.md.
std::string RenderJsonReport(const Report& report);
// One self-contained offline HTML page (inline CSS/JS, SVG charts, sortable tables); layout
// documented in docs/formats/html.md.
std::string RenderHtmlReport(const Report& report);

}  // namespace sightline
