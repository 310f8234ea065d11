// Turns a TraceDiffResult into Report sections, so the text and JSON reporters render a diff the
// way they render an analysis. Layout: docs/formats/diff-json.md.
#pragma once

#include <memory>

#include "analyses/analysis.h"
#include "diff/trace_diff.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// Appends the diff sections (summary, gate, kernels, categories, ranges, iterations) to a report
// whose input 0 is the baseline and input 1 the candidate, and sets Report::gate. Long tables keep
// `top_n` rows.
void AddDiffSections(const TraceDiffResult& diff, int top_n, Report& report);

// Registry entry "diff" (a TraceSet of kind kDiff: baseline, then candidate): the diff report's
// sections; with a threshold, the CI gate's verdict in Report::gate.
std::unique_ptr<MultiTraceAnalysis> CreateDiffAnalysis(const AnalyzeOptions& options);

}  // namespace sightline
