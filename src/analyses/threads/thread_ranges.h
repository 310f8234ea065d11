// NVTX time per thread: for each thread, the NVTX (and PyTorch record_function) range names it
// spent most time in — over the whole trace and per iteration of the main set (the median over the
// iterations against the slowest one) — so that a thread whose "detokenize" or "send_response"
// grew in the slow iteration stands out. Names are grouped by pattern ("layer_12" and "layer_13"
// as "layer_N"); a name's time is the union of its ranges on the thread (a range nested in one of
// the same name is not counted twice); the ranges that define the main set's iterations are left
// out (they would be 100% of every iteration). Part of the threads analysis
// (analyses/threads/threads.h). Units: ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "analyses/threads/threads_per_iteration.h"
#include "base/time_units.h"
#include "model/trace.h"

namespace sightline {

struct ThreadsResult;

inline constexpr size_t kRangeNamesPerThread = 5;

struct ThreadRangeRow {
  int32_t pid = -1, tid = -1;
  std::string thread;  // its name
  ThreadRole role = ThreadRole::kOther;
  std::string name;                // the range name's pattern
  int64_t count = 0;               // its ranges on the thread
  DurationNs total_ns = 0;         // union of their intervals
  PerIterationPart per_iteration;  // clipped to each iteration; zero without iterations
};

struct ThreadRangesResult {
  bool per_iteration = false;      // the main set has iterations
  int64_t slowest_iteration = -1;  // index in the main set
  // Grouped by thread in the order of ThreadsResult::threads; within a thread by total, largest
  // first, at most kRangeNamesPerThread names.
  std::vector<ThreadRangeRow> rows;
  int64_t names_left_out = 0;  // (thread, name) pairs past kRangeNamesPerThread
};

// Over the threads of `threads`: NVTX push/pop and start/end ranges and PyTorch user annotations
// (not CPU ops or Python functions).
ThreadRangesResult ComputeThreadRanges(AnalysisContext& context, const ThreadsResult& threads);

}  // namespace sightline
