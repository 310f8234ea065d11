// The batch sizes of a trace's steps for the whole-graph estimate
// (analyses/cuda_graphs/whole_graph_estimate.h: StepBatches), from the iteration log joined to the
// trace's iterations (analyses/iteration_log/iteration_log_join.h: by iteration counter, else by
// timestamp), and what the log's lines could not say: counted, so that the section shows them
// rather than a choice of eager runs resting on them. docs/analyses/cuda_graphs.md, "Eager runs of
// the graph's batch size".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analyses/cuda_graphs/whole_graph_estimate.h"

namespace sightline {

class AnalysisContext;  // analyses/common/analysis_context.h

struct GraphStepBatches {
  StepBatches batches;         // one step per joined line
  std::string join;            // how the log was joined: IterationLogJoinMethodName
  std::string note;            // the join's own note (why lines did not join); empty when all did
  int64_t steps = 0;           // lines joined to the trace
  int64_t with_batch = 0;      // ... stating a decode batch (generation_requests, else active)
  int64_t with_graph = 0;      // ... naming a graph batch size (graph_batch_size, ...)
  int64_t without_batch = 0;   // ... giving neither: their steps choose nothing. Why (a line may
                               // count in more than one of the following):
  int64_t nothing_stated = 0;  // no request count (or 0) and no graph batch size at all
  int64_t with_context = 0;    // context (prefill) work: no decode batch
  int64_t bad_batch = 0;       // a negative request count
  int64_t bad_graph = 0;       // a graph batch size that is no positive integer
  int64_t garbage = 0;         // lines with a bad_batch or bad_graph value
};

// Empty when the run was given no iteration log (--iteration-log).
std::optional<GraphStepBatches> GraphStepBatchesFromLog(AnalysisContext& context);

}  // namespace sightline
