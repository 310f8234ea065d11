// NVTX → GPU projection: for each host range name (NVTX and PyTorch annotations), the CPU time of
// the ranges and the GPU time of the work launched inside them (docs/metrics.md, "NVTX → GPU
// projection"). Input: one Trace. Output: one row per (name, domain, depth). Units: ns.
// docs/analyses/nvtx_projection.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "facts/launch_projection.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

struct NvtxProjectionOptions {
  // PyTorch cpu_op (aten::...) and python_function ranges are left out by default: they are
  // operator and stack frames, not user marks, and would outnumber the marks a hundredfold.
  bool include_cpu_ops = false;
};

// All ranges with one name (and domain) at one nesting depth. Depth counts only the ranges the
// projection considers, so a name that nests inside itself gets a row per level and no row
// counts the same GPU work twice.
struct NvtxRangeGroup {
  StringId name;  // of this trace; empty for a group of the eager reference
  // A group of the eager reference's ranges (`analyze --eager-reference`): graph kernels whose
  // replay matched an eager run there count in the ranges around their counterpart's launch,
  // below the eager step (facts/graph_kernel_paths.h, PathSource::kReference). No range of this
  // trace: count and CPU time are 0, the work adds no span. `reference_name` views the
  // reference's string pool.
  bool from_reference = false;
  std::string_view reference_name;
  StringId domain;
  RangeKind kind = RangeKind::kNvtxPushPop;  // of the first instance
  int32_t depth = 0;
  // Nesting path of the first instance: "outer / inner / name"; deeper than 12, the outermost 3
  // and innermost 8 names around "(N more)".
  std::string path;
  int64_t count = 0;
  DurationNs cpu_total_ns = 0;  // sum of range durations
  DurationNs cpu_max_ns = 0;
  LaunchedWork work;                 // summed over instances (first/last are over all instances)
  DurationNs gpu_span_total_ns = 0;  // sum over instances of each instance's GPU span
  int64_t instances_with_gpu_work = 0;
};

struct NvtxProjectionResult {
  std::vector<NvtxRangeGroup> groups;  // by GPU time, then CPU time, descending
  int64_t ranges = 0;                  // ranges considered
  // Per considered range (rows of trace.ranges, ascending) and its projection; for findings and
  // drill-down.
  std::vector<int32_t> rows;
  RangeProjection projection;
  int64_t kernels = 0;            // all kernels in the trace
  int64_t kernels_in_ranges = 0;  // launched (or captured) inside at least one considered range
  int64_t unlinked_kernels = 0;   // no launch_call: cannot be projected
  DurationNs unlinked_kernel_time_ns = 0;
  int64_t unlinked_memops = 0;
  // Kernels replayed from CUDA graphs (GraphKernelRows: a graph node, or launched by a graph
  // launch), and how each came to a range that says what it is (docs/metrics.md, "Replayed graph
  // kernels"):
  int64_t graph_kernels = 0;
  int64_t kernels_with_capture = 0;  // with their node's capture thread and time
  int64_t kernels_aligned = 0;       // without one, matched with an eager kernel instead
  int64_t kernels_by_capture = 0;    // of kernels_in_ranges, held by a range at their capture
  int64_t kernels_by_alignment = 0;  // ... at their eager counterpart (below the eager step)
  // Graph kernels matched with a kernel of the eager reference (neither a capture point nor an
  // eager run in this trace), and of them those inside a range there (below its eager step):
  // they count in the reference's groups (from_reference), not in kernels_in_ranges.
  int64_t kernels_reference_matched = 0;
  int64_t kernels_by_reference = 0;
  // Graph kernels held by no way: counted only at their launch (graph_step_N).
  int64_t graph_kernels_unattributed() const {
    return graph_kernels - kernels_by_capture - kernels_by_alignment - kernels_by_reference;
  }
};

StatusOr<NvtxProjectionResult> ComputeNvtxProjection(AnalysisContext& context,
                                                     const NvtxProjectionOptions& options);

// Registry entry: the "nvtx_projection" section.
Status RunNvtxProjectionSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
