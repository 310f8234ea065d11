// CUDA graph replays and the distinct graphs they replay, for the findings that know graphs
// (graph_launch_gaps, graph_variants, graph_padding; docs/analyses/findings.md) and the
// cuda_graphs per-replay chart. A replay is one graph launch's work on the GPU: its kernels traced
// node by node, or its whole-graph row (graph-mode tracing). Replays are told apart by graph: by
// the nodes their kernels were captured as (or instantiated as), by the graph id of a whole-graph
// row, else by their kernel sequence (name, grid, block), which two batch sizes of one step
// usually differ in. Input: one Trace. Output: replays in launch order, variants, captures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/time_units.h"
#include "model/trace.h"

namespace sightline {

struct GraphReplay {
  int32_t launch_call = kNoRow;  // the cudaGraphLaunch / cuGraphLaunch row; kNoRow unknown
  int32_t pid = -1, tid = -1;    // the launching thread (-1 unknown)
  TimeNs launch_ns = -1;         // the launch call's start; -1 unknown
  TimeNs launch_end_ns = -1;
  int32_t device = -1;
  TimeNs gpu_start_ns = 0, gpu_end_ns = 0;  // first kernel start, last kernel end
  int64_t kernels = 0;                      // kernel rows (a whole-graph row counts one)
  DurationNs gpu_ns = 0;                    // summed kernel durations
  bool whole = false;                       // a whole-graph row, not kernels
  int32_t variant = -1;                     // index into GraphReplays::variants
};

struct GraphVariant {
  std::string label;               // "CUDA graph 3" (whole-graph rows) or "graph 2 (279 kernels)"
  int64_t replays = 0;             // launches of it in the trace
  int64_t kernels_per_replay = 0;  // of its first replay
  DurationNs gpu_ns = 0;           // summed over its replays
  // Where its nodes were captured (kernels with a capture point): the thread and the first and
  // last capture times; -1 when unknown.
  int32_t capture_pid = -1, capture_tid = -1;
  TimeNs capture_first_ns = -1, capture_last_ns = -1;
  int32_t capture = -1;  // index into GraphReplays::captures of the capture holding its nodes
};

// A stream capture in the trace (cudaStreamBeginCapture .. cudaStreamEndCapture on one thread) and
// the instantiations that followed it on that thread before the next capture.
struct GraphCapture {
  int32_t pid = -1, tid = -1;
  TimeNs begin_ns = 0, end_ns = 0;  // begin call's start to end call's end
  DurationNs instantiate_ns = 0;    // host time in cudaGraphInstantiate* after it
  int32_t variant = -1;             // the replayed graph whose nodes it created; -1 none seen
  DurationNs host_ns() const { return end_ns - begin_ns + instantiate_ns; }
};

struct GraphReplays {
  std::vector<GraphReplay> replays;    // by launch time (GPU start when the launch is unknown)
  std::vector<GraphVariant> variants;  // by first replay
  std::vector<GraphCapture> captures;  // by begin time
};

// Replays longer than this many kernels are told apart by their first kMaxSignatureKernels only
// when no node ids are known (a bound on the work for hostile traces).
inline constexpr size_t kMaxSignatureKernels = 4096;

// `graph`: GraphKernelRows(trace) (per kernel row, 1 for a graph kernel). Cost: O(kernels log
// kernels + API calls).
GraphReplays ComputeGraphReplays(const Trace& trace, const std::vector<uint8_t>& graph);

}  // namespace sightline
