// The analyze and diff pipelines end to end: import each trace into an AnalysisContext, run the
// registered single-trace analyses on it and hand it to the registered multi-trace analyses of its
// TraceSet's kind, collect the diagnostics into a Report. The CLI and the golden tests share it so
// they cannot drift apart. Nothing is wired by hand: the registries decide what runs.
#pragma once

#include <string>
#include <vector>

#include "analyses/analysis.h"
#include "base/status.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// All multi-trace analyses (ranks, diff), in report order (pipeline/registry.cc).
const std::vector<MultiTraceAnalysisEntry>& MultiTraceAnalyses();

// Imports `paths` (format sniffed per file) and analyses each. The first import error is returned.
// Paths may be directories or unexpanded globs (ExpandTracePaths). The inputs form a TraceSet of
// kind kRanks: two or more are the ranks of one job, and the "ranks" section and the straggler
// finding come first (docs/analyses/ranks.md).
StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths, const AnalyzeOptions& options);

// `sightline diff`: a TraceSet of kind kDiff (inputs "baseline" and "candidate"); the gate's
// verdict is in Report::gate (docs/analyses/diff.md).
StatusOr<Report> DiffFiles(const std::string& baseline, const std::string& candidate,
                           const AnalyzeOptions& options);

// Each directory becomes its *.json, *.json.gz and *.sqlite files (sorted by name), each pattern
// with * ? [ that names no existing file becomes its matches (sorted); other paths stay as given.
StatusOr<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& paths);

// Adds the context's trace to `report` as a new input; returns its input index.
int AddReportInput(const AnalysisContext& context, const std::string& label, Report& report);

// Adds one imported trace to `report` as a new input and runs every single-trace analysis on it.
Status AnalyzeTrace(AnalysisContext& context, const std::string& label, Report& report);

}  // namespace sightline
