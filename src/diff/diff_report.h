// Turns a TraceDiffResult into Report sections, so the text and JSON reporters render a diff the
// way they render an analysis. Layout: docs/formats/diff-json.md.
#pragma once

#include <memory>

#include "analyses/common/analysis.h"
#include "diff/loop_verdicts.h"
#include "diff/trace_diff.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// Appends the diff sections (summary, gate, kernels, categories, ranges, iterations) to a report
// whose input 0 is the baseline and input 1 the candidate, and sets Report::gate. Long tables keep
// `top_n` rows.
void AddDiffSections(const TraceDiffResult& diff, int top_n, Report& report);
// With a verdict (diff/loop_verdicts.h): its section comes first, and when it is available and has
// a threshold, it decides the gate (slower, not slower, cannot tell) instead of the sums.
// `candidate_input`: the report input of the candidate's (first) run.
void AddDiffSections(const TraceDiffResult& diff, const LoopVerdicts* verdict, int top_n,
                     Report& report, int candidate_input = 1);

// Registry entry "diff" (a TraceSet of kind kDiff: AnalyzeOptions::diff.baseline_runs baseline
// runs, then the candidate's): the verdict over all runs, the tables of the first run of each
// side; with a threshold, the CI gate's answer in Report::gate.
std::unique_ptr<MultiTraceAnalysis> CreateDiffAnalysis(const AnalyzeOptions& options,
                                                       const RunInputs& inputs);

}  // namespace sightline
