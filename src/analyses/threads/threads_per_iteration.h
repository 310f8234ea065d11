// Threads per iteration: each thread's GIL held and waited, OS waits and off-CPU time inside the
// iterations of the main set — the median over the iterations against the slowest one — so that
// the thread that did something else in the slow iteration (a response thread holding the GIL, a
// worker blocked in poll) stands out. Part of the threads analysis (analyses/threads/threads.h).
// Units: ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "base/time_units.h"
#include "model/trace.h"

namespace sightline {

struct ThreadsResult;

// One part of a thread's time per iteration: its median over the iterations and its value in the
// slowest one, each clipped to the iteration.
struct PerIterationPart {
  double median_ns = 0;
  DurationNs slowest_ns = 0;
};

struct ThreadPerIteration {
  int32_t pid = -1, tid = -1;
  std::string name;
  ThreadRole role = ThreadRole::kOther;
  PerIterationPart gil_held, gil_waited, os_wait, off_cpu;
};

struct ThreadsPerIterationResult {
  int64_t slowest_iteration = -1;  // index in the main set; -1 without iterations
  DurationNs slowest_wall_ns = 0;
  double median_wall_ns = 0;
  std::vector<ThreadPerIteration> threads;  // in the order of ThreadsResult::threads
};

// For the threads of `threads` (its rows and has_* flags) with any GIL, OS-wait or off-CPU time
// inside the main set's iterations; empty without iterations.
ThreadsPerIterationResult ComputeThreadsPerIteration(AnalysisContext& context,
                                                     const ThreadsResult& threads);

}  // namespace sightline
