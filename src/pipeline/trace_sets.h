// What `analyze` and `diff` share of the pipeline (pipeline.cc, diff_runs.cc): a trace imported
// into an analysis context, and a set of traces run through the registries.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "base/status.h"
#include "pipeline/pipeline.h"
#include "report/report.h"

namespace sightline {

// Imports the trace at `path` (its path kept as its source when the reader left none) into a
// context with `options`.
StatusOr<std::shared_ptr<AnalysisContext>> ImportContext(const std::string& path,
                                                         const AnalyzeOptions& options);

// Runs a TraceSet through the registries: per member, import, (for `analyze`) the single-trace
// analyses, then each multi-trace analysis of the set's kind sees the member; the member's trace
// is released unless an analysis keeps it. Multi-trace sections come first in the report.
StatusOr<Report> RunTraceSet(TraceSet set, const std::vector<std::string>& files,
                             const AnalyzeOptions& options);

}  // namespace sightline
