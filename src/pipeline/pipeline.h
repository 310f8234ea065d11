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
// Paths may be directories or unexpanded globs (ExpandTracePaths). Two or more inputs are the ranks
// of one job: a "ranks" section and the straggler finding are added (docs/analyses/ranks.md).
StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths, const AnalyzeOptions& options);

// Each directory becomes its *.json, *.json.gz and *.sqlite files (sorted by name), each pattern
// with * ? [ that names no existing file becomes its matches (sorted); other paths stay as given.
StatusOr<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& paths);

// Adds one imported trace to `report` as a new input and runs every analysis on it.
Status AnalyzeTrace(const Trace& trace, const std::string& label, const AnalyzeOptions& options,
                    Report& report);

}  // namespace sightline
