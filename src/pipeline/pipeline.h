// The analyze pipeline end to end: import each trace, run every registered analysis, collect the
// diagnostics into a Report. The CLI and the golden tests share it so they cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "analyses/analysis.h"
#include "base/status.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// Imports `paths` (format sniffed per file) and analyses each. The first import error is returned.
StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths, const AnalyzeOptions& options);

// Adds one imported trace to `report` as a new input and runs every analysis on it.
Status AnalyzeTrace(const Trace& trace, const std::string& label, const AnalyzeOptions& options,
                    Report& report);

}  // namespace sightline
