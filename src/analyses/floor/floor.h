// How far from the hardware: for each step of the trace's loop (the iterations), the least time
// the GPU allows for the step's work (step_cost.h: bytes over memory bandwidth, FLOPs over tensor
// throughput; gpu_peaks.h) beside the measured wall and GPU busy time, and where the time above
// the floor goes (GPU idle, non-GEMM kernels, GEMM/attention kernels below peak). Needs the
// model's config (--model-config) and each step's work (--batch/--context, or an iteration log
// that states it); or a snapshot's weights; or, without either, the GEMM shapes the trace records
// (gemm_shapes.h). Input: one trace. Units: ns, bytes, FLOPs. docs/analyses/floor.md.
#pragma once

#include <string>
#include <string_view>
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
  // Sampled GPU metrics over the step's window (time-weighted means, % of peak); -1: not sampled.
  double dram_pct = -1, tensor_pct = -1;
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

// What a range of the trace names (docs/analyses/floor.md, "Per layer"): a decoder layer
// ("layer_3", "model.layers.3", "nn.Module: LlamaDecoderLayer_3"), the head ("lm_head", "head"),
// the embedding ("embed", "embed_tokens", "nn.Module: Embedding_0"), a routed expert
// ("experts.5", "expert_5"); index -1 for the head and the embedding.
enum class ModelPart : uint8_t { kNone, kLayer, kHead, kEmbedding, kExpert };
struct ModelPartName {
  ModelPart part = ModelPart::kNone;
  int64_t index = -1;
};
ModelPartName ParseModelPart(std::string_view range_name);

// One part of the model (a decoder layer, the head, the embedding, one expert of a layer) over
// the steps of one family: the GPU time of its kernels in each step against its own floor.
struct FloorLayer {
  std::string name;  // "layer 3", "head", "embedding", "layer 3 expert 5"
  ModelPart part = ModelPart::kNone;
  int64_t layer = -1, expert = -1;
  int64_t steps = 0;    // steps in which it ran kernels
  int64_t kernels = 0;  // its kernels, summed over those steps
  // Medians over the steps: span = its first kernel's start to its last kernel's end in the step;
  // busy = the union of its kernels; idle = span - busy; other = busy outside GEMM and attention
  // kernels; gemm_above = GEMM/attention time - floor (at least 0).
  double span_ns = 0, busy_ns = 0, idle_ns = 0, other_ns = 0, gemm_above_ns = 0;
  double floor_ns = 0, memory_floor_ns = 0, compute_floor_ns = 0;  // of the median step's work
  double ratio = 0, busy_ratio = 0;                                // span / floor, busy / floor
  double weight_bytes = 0, kv_bytes = 0, flops = 0;
  bool compute_bound = false;
  double above_ns = 0;  // Σ over the steps of span - floor, at least 0
  std::string holder;   // as FloorFamily::holder, over this part's time
  double holder_ns = 0;
  double dram_pct = -1, tensor_pct = -1;  // sampled over its spans; -1 not sampled
};

// The parts of one family's steps, each against its own floor (docs/analyses/floor.md, "Per
// layer"): decoder layers in order, then the head and the embedding, then experts.
struct FloorFamilyLayers {
  std::string family;  // FloorFamily::name
  std::vector<FloorLayer> layers;
  int64_t family_kernels = 0;        // kernels of the family's steps on the device
  int64_t placed_by_range = 0;       // of them, placed in a part by the ranges around
                                     // their launch
  int64_t placed_by_graph_path = 0;  // ... by the ranges at their graph node's capture (or
                                     // around their eager counterpart)
  std::vector<std::string> notes;    // what was left out of this family's table

  // The decoder layer with the most time above its floor; null when no layer is known.
  const FloorLayer* TopLayer() const;
};

struct FloorResult {
  bool computed = false;
  std::string not_computed;  // why there is no floor (no steps, no work, no bandwidth)
  std::string model;         // "llama, 16 layers, hidden 2048, ... (config.json)": the file name
  ModelSizes sizes;          // zero without a config
  int64_t dtype_bytes = 2;
  std::string weights_from;  // "the model config (config.json)", "the memory snapshot's ...",
                             // "GEMM shapes (record_shapes): ..."
  // No config, no snapshot: the floor from the trace's GEMM shapes (gemm_shapes.h), with the
  // operators counted over the steps kept and those whose shapes could not be used.
  bool from_gemm_shapes = false;
  int64_t shape_ops = 0, shape_ops_unreadable = 0;
  FloorPeaks peaks;
  int32_t device = -1;
  std::vector<FloorStep> steps;  // the steady steps (warm-up left out), in trace order
  std::vector<FloorFamily> families;
  // Per layer, for the family with the most steady time (layers_family), where the trace names
  // layers: decoder layers in order, then the head and the embedding, then experts. (Its own
  // members rather than a FloorFamilyLayers: the table "layers" and the rule read these.)
  std::string layers_family;
  std::vector<FloorLayer> layers;
  int64_t family_kernels = 0;        // kernels of layers_family's steps on the device
  int64_t placed_by_range = 0;       // of them, placed in a part by the ranges around
                                     // their launch
  int64_t placed_by_graph_path = 0;  // ... by the ranges at their graph node's capture (or
                                     // around their eager counterpart)
  // The same for every other family whose kernels the ranges place, most steady time first.
  std::vector<FloorFamilyLayers> other_layers;
  std::vector<std::string> notes;

  // The decoder layer with the most time above its floor; null when no layer is known.
  const FloorLayer* TopLayer() const;
  // The same for the family named `family` (FloorFamily::name), whichever table holds it.
  const FloorLayer* TopLayerOf(std::string_view family) const;
};

// Needs the run's model (context.inputs().model): a config's shapes, or only a memory snapshot's
// weights (ModelConfig::snapshot_weight_bytes); or, without one, options.asks_for_shapes() and a
// trace with GEMM shapes; a result with computed false (and why) when the floor cannot be had.
StatusOr<FloorResult> ComputeFloor(AnalysisContext& context, const FloorOptions& options);

// ComputeFloor with the context's options, computed once (the rule far_from_floor reads it).
StatusOr<const FloorResult*> CachedFloor(AnalysisContext& context);

// The ratio of a family's median wall time to its floor at which the rule far_from_floor speaks.
inline constexpr double kFarFromFloorRatio = 2.0;

// Section "floor" ("How far from the hardware"); nothing without --model-config,
// --weights-snapshot or a floor option that asks for the floor from GEMM shapes.
Status RunFloorSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
