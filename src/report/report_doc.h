// The field list of the JSON report, generated from the Report's description of itself
// (report_schema.h): one markdown table per JSON object, in docs/formats/report-json.md between
// the markers below (tests/reporters/report_schema_test.cc keeps the two equal;
// SIGHTLINE_UPDATE_DOCS=1 rewrites the block).
#pragma once

#include <string>

namespace sightline {

inline constexpr char kReportFieldsBegin[] =
    "<!-- BEGIN report fields: generated from src/report/report_schema.h -->";
inline constexpr char kReportFieldsEnd[] = "<!-- END report fields -->";

std::string RenderReportFieldsDoc();

}  // namespace sightline
