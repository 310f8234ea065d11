// What `analyze`, `diff` and `query` share of the pipeline (pipeline.cc, diff_runs.cc,
// query/query_inputs.cc): a trace imported into an analysis context, and a set of traces run
// through the registries, begun and finished the same way wherever its members are analysed.
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
// context with `options` and the run's other documents, `inputs`.
StatusOr<std::shared_ptr<AnalysisContext>> ImportContext(const std::string& path,
                                                         const AnalyzeOptions& options,
                                                         const RunInputs& inputs = {});

// The label of a rank's trace in the report: its file name, and its rank when the trace says it.
std::string MemberLabel(const std::string& path, const Trace& trace);

// The multi-trace analyses of one set, each registry entry of the set's kind with its analysis.
struct MultiTraceRun {
  const MultiTraceAnalysisEntry* entry = nullptr;
  std::unique_ptr<MultiTraceAnalysis> analysis;
};

// Creates every multi-trace analysis of `kind` (MultiTraceAnalyses(), in its order) for one run.
std::vector<MultiTraceRun> CreateMultiTraceAnalyses(TraceSetKind kind,
                                                    const AnalyzeOptions& options,
                                                    const RunInputs& inputs);

// Hands a member, while its trace is loaded, to each of `multi` (MultiTraceAnalysis::Add); an
// error names the file and the analysis.
Status AddToMultiTrace(std::vector<MultiTraceRun>& multi,
                       const std::shared_ptr<AnalysisContext>& context,
                       const TraceSetMember& member);

// After the set's last member: each analysis's Finish, in registry order, with their sections
// moved before the members' own; then the finding rules on the whole results they left (ranks,
// serving) and every finding of the report ranked together (the members' arrive each ranked on
// its own).
Status FinishTraceSet(const TraceSet& set, std::vector<MultiTraceRun>& multi,
                      const AnalyzeOptions& options, Report& report);

// Runs a TraceSet through the registries: per member, import, (for `analyze`) the single-trace
// analyses, then each multi-trace analysis of the set's kind sees the member; the member's trace
// is released unless an analysis keeps it. Multi-trace sections come first in the report.
StatusOr<Report> RunTraceSet(TraceSet set, const std::vector<std::string>& files,
                             const AnalyzeOptions& options, const RunInputs& inputs = {});

}  // namespace sightline
