// How far from the hardware: for each step of the trace's loop (the iterations), the least time
// the GPU allows for the step's work (step_cost.h: bytes over memory bandwidth, FLOPs over tensor
// throughput; gpu_peaks.h) beside the measured wall and GPU busy time, and where the time above
// the floor goes (GPU idle, non-GEMM kernels, GEMM/attention kernels below peak). Needs the
// model's config (--model-config) and each step's work (--batch/--context, or an iteration log
// that states it). Input: one trace. Units: ns, bytes, FLOPs. docs/analyses/floor.md.
#pragma once

#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/floor/step_cost.h"
#include "base/status.h"
#include "report/report.h"

namespace sightline {

// The peaks the floor divides by, and where each came from.
struct FloorPeaks {
  std::string device;         // the trace's device name; "" when it names none
  std::string table_entry;    // the gpu_peaks.h entry matched; "" none
  double memory_gbps = 0;     // 0: unknown (no floor)
  double tensor_tflops = 0;   // 0: unknown (memory floor alone)
  std::string memory_source;  // "--peak-bandwidth", "table: <datasheet>", "trace: device ..."
  std::string tensor_source;
};

struct FloorStep {
  int64_t index = 0;  // Iteration::index, or the log row's position when joined by time
  TimeNs start_ns = 0, end_ns = 0;
  std::string family;     // "decode", "prefill", "mixed"
  std::string group;      // its FloorFamily's name: "decode, batch 16"
  std::string work_from;  // "options", "iteration log"
  StepWork work;
  StepCost cost;
  double memory_floor_ns = 0, compute_floor_ns = 0;
  double floor_ns = 0;  // the larger of the two
  DurationNs wall_ns = 0, busy_ns = 0;
  // The step's GPU time by what ran (kernels that start in the step, on the step's device):
  // GEMM and attention kernels; CUDA graphs traced whole (their kernels unknown); the rest of
  // the busy time (other kernels, copies and sets).
  DurationNs gemm_attention_ns = 0, whole_graph_ns = 0, other_ns = 0;
  // wall - floor, split: idle (wall - busy), other_ns, and GEMM/attention above the floor
  // (gemm_attention_ns - floor_ns, at least 0).
  DurationNs idle_ns = 0;
  double gemm_above_ns = 0;
  double ratio() const { return floor_ns > 0 ? static_cast<double>(wall_ns) / floor_ns : 0; }
};

// The steps of one family and batch, side by side.
struct FloorFamily {
  std::string name;  // "decode, batch 16"
  std::string family;
  int64_t steps = 0;
  double median_wall_ns = 0, median_busy_ns = 0, median_floor_ns = 0;
  double memory_floor_ns = 0, compute_floor_ns = 0;  // of the median step's work
  double ratio = 0;                                  // median wall / median floor
  double busy_ratio = 0;                             // median busy / median floor
  // Medians over the steps of each part of the split of wall - floor.
  double idle_ns = 0, other_ns = 0, gemm_above_ns = 0, whole_graph_ns = 0;
  double weight_bytes = 0, kv_bytes = 0, flops = 0;  // of the median step's work
  // Sampled GPU metrics over the family's steps (time-weighted means, % of peak; docs/metrics.md,
  // "GPU metrics"): DRAM read + write bandwidth and tensor-core activity; -1 when not sampled.
  double dram_pct = -1, tensor_pct = -1;
  bool compute_bound = false;  // compute floor >= memory floor
  // The largest part of the time above the floor: "GPU idle", "non-GEMM kernels", "GEMM/attention
  // below peak", "CUDA graphs traced whole"; "none: below the floor" when ratio < 1.
  std::string holder;
  double holder_ns = 0;  // that part, summed over the steps
};

struct FloorResult {
  bool computed = false;
  std::string not_computed;  // why there is no floor (no steps, no work, no bandwidth)
  std::string model;         // "llama, 16 layers, hidden 2048, ... (config.json)": the file name
  ModelSizes sizes;
  int64_t dtype_bytes = 2;
  FloorPeaks peaks;
  int32_t device = -1;
  std::vector<FloorStep> steps;  // the steady steps (warm-up left out), in trace order
  std::vector<FloorFamily> families;
  std::vector<std::string> notes;
};

// Needs options.model; a result with computed false (and why) when the floor cannot be had.
StatusOr<FloorResult> ComputeFloor(AnalysisContext& context, const FloorOptions& options);

// ComputeFloor with the context's options, computed once (the rule far_from_floor reads it).
StatusOr<const FloorResult*> CachedFloor(AnalysisContext& context);

// The ratio of a family's median wall time to its floor at which the rule far_from_floor speaks.
inline constexpr double kFarFromFloorRatio = 2.0;

// Section "floor" ("How far from the hardware"); nothing without --model-config.
Status RunFloorSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
