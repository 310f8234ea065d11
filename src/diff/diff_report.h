// Turns a TraceDiffResult into Report sections, so the text and JSON reporters render a diff the
// way they render an analysis. Layout: docs/formats/diff-json.md.
#pragma once

#include "diff/trace_diff.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// A report whose input 0 is the baseline and input 1 the candidate, with the diff sections
// (summary, gate, kernels, categories, ranges, iterations). Long tables keep `top_n` rows.
Report BuildDiffReport(const Trace& baseline, const Trace& candidate, const TraceDiffResult& diff,
                       int top_n);

}  // namespace sightline
