#include "analyses/cuda_graphs/graph_step_batches.h"

#include "analyses/common/analysis_context.h"
#include "analyses/iteration_log/iteration_log_batch.h"
#include "analyses/iteration_log/iteration_log_join.h"

namespace sightline {

std::optional<GraphStepBatches> GraphStepBatchesFromLog(AnalysisContext& context) {
  const IterationLogJoin* found = IterationLogJoinOf(context);
  if (found == nullptr) return std::nullopt;
  const IterationLogJoin& join = *found;
  GraphStepBatches out;
  out.join = IterationLogJoinMethodName(join.method);
  out.note = join.note;
  // The counter join's iterations are one process's; a timestamp join names none.
  const int32_t pid = join.set != nullptr ? join.set->pid : -1;
  for (const IterationLogRow& row : join.rows) {
    const LoggedBatch b = LoggedBatchOf(*row.entry);
    ++out.steps;
    StepBatches::Step& step = out.batches.steps.emplace_back();
    step.pid = pid;
    step.start_ns = row.start_ns;
    step.end_ns = row.end_ns;
    if (b.decode && *b.decode > 0) {
      step.batch = *b.decode;
      ++out.with_batch;
    }
    if (b.graph) {
      step.graph_batch = *b.graph;
      ++out.with_graph;
    }
    out.with_context += b.context;
    out.bad_batch += b.bad_decode;
    out.bad_graph += b.bad_graph;
    out.garbage += b.bad_decode || b.bad_graph;
    if (step.batch < 0 && step.graph_batch < 0) {
      ++out.without_batch;
      out.nothing_stated += !b.context && !b.bad_decode && !b.bad_graph;
    }
  }
  return out;
}

}  // namespace sightline
