// CUDA graph kernels, attributed to the host ranges that were open when each kernel's node was
// captured (docs/analyses/cuda_graphs.md). A replayed graph runs its kernels from one
// cudaGraphLaunch, so the ranges around the launch say only "graph_step_N"; the ranges around the
// capture (layer_3 > attention) say what each kernel is. The capture point of a kernel comes from
// its graph node: nsys --cuda-graph-trace=node (CUDA_GRAPH_NODE_EVENTS, through the node it was
// cloned from) gives the thread and time at which the node was created.
// Input: one Trace. Output: per range path at capture, the kernels per replay, their GPU time per
// replay and in all, and the share of graph kernels that could be attributed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

struct GraphKernelPaths;  // facts/graph_kernel_paths.h

struct CaptureRangeRow {
  // "capture > layer_3 > attention"; "(no range)" when none was open. Aligned rows: the ranges
  // around the eager counterparts inside the eager run ("layer_3 > attention").
  std::string path;
  bool aligned = false;    // ranges from alignment with an eager run, not from the capture
  bool reference = false;  // ... with an eager run of the eager reference trace
  // Distinct graph nodes captured there (kernels per replay). Reference rows: kernels / the
  // replays with a kernel there (the counterparts are another trace's kernels, and replays of two
  // graphs may match two eager runs).
  int64_t nodes = 0;
  int64_t kernels = 0;           // kernel executions, all replays
  DurationNs gpu_ns = 0;         // summed kernel durations, all replays
  double replays = 0;            // kernels / nodes
  DurationNs per_replay_ns = 0;  // gpu_ns / replays
  // The earliest capture point of its kernels (aligned rows: their eager counterparts' earliest
  // launch): orders the rows as the program ran them (layer_0 before layer_1).
  TimeNs first_ns = INT64_MAX;
  // The same ranges run eagerly (names below another outermost range): runs, and per run the
  // kernels launched inside and their GPU time. 0 runs: no eager counterpart in the trace.
  // Reference rows: in the eager reference trace.
  int64_t eager_instances = 0;
  double eager_kernels_per_instance = 0;
  DurationNs eager_per_instance_ns = 0;
};

struct CudaGraphsResult {
  int64_t graph_kernels = 0;    // kernels that ran from a graph node
  int64_t with_capture = 0;     // ... whose capture point is known
  int64_t aligned = 0;          // ... without one, matched with an eager kernel (graph_alignment.h)
  int64_t by_reference = 0;     // ... without either, matched with a kernel of the eager reference
  int64_t in_ranges = 0;        // ... given at least one range (at capture or by alignment)
  DurationNs graph_gpu_ns = 0;  // summed durations of the graph kernels
  DurationNs in_ranges_gpu_ns = 0;
  int64_t graph_launches = 0;    // cudaGraphLaunch / cuGraphLaunch calls
  int64_t replays_to_align = 0;  // replays with kernels but no capture points
  int64_t replays_aligned = 0;   // ... matched with an eager run
  int64_t sequences_cut = 0;     // graphs not aligned: the alignment's work bound was spent
  // With an eager reference: the replays left to it (matched with no eager run of the trace), and
  // those matched with an eager run of the reference; its kernels left unmatched.
  bool reference_given = false;
  int64_t replays_to_reference = 0;
  int64_t replays_by_reference = 0;
  int64_t reference_unmatched = 0;
  std::vector<CaptureRangeRow> rows;  // by GPU time, largest first
};

CudaGraphsResult ComputeCudaGraphs(const Trace& trace);
// The same with the paths computed by the caller (GraphFacts::GraphPaths()); with the eager
// reference they were computed with, whose ranges give the reference rows' eager columns.
// `graphs` (may be null): per kernel row, the graph its replay ran and that graph's label
// (facts/graph_replays.h); kernels captured under no range are then one row per graph, since
// nothing else tells two graphs apart there.
struct KernelGraphs {
  std::vector<int32_t> of_kernel;   // -1: not a replay's kernel, or unknown
  std::vector<std::string> labels;  // by graph
};
CudaGraphsResult ComputeCudaGraphs(const Trace& trace, const GraphKernelPaths& paths,
                                   const Trace* eager_reference = nullptr,
                                   const KernelGraphs* graphs = nullptr);

// cudaGraphLaunch / cuGraphLaunch calls, one per launch (a runtime call and the driver call inside
// it share a correlation id).
int64_t CountGraphLaunches(const Trace& trace);

// Section "cuda_graphs", only for traces with graph kernels.
Status RunCudaGraphsSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
