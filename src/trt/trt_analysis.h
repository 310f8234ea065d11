// The Trex-style view of one TensorRT engine (trt/trt_engine.h): per-layer time joined with the
// layer's type, precision and tactic; totals by type and by precision; the reformat layers and the
// layers that need them; fused layers split into their parts; and the latency statistics of the
// timing export the way trtexec states them. Layer times are the profile's per-run averages, in ms;
// latency figures are ms. docs/analyses/trt_engine.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "importers/trt_engine/trt_engine.h"

namespace sightline {

struct TrtLayerRow {
  std::string name;
  std::string type;       // "" when the layer is only in the profile
  std::string precision;  // of its first output; "" unknown
  std::string tactic;
  std::string origin;
  double time_ms = 0;    // average per run (profile)
  double median_ms = 0;  // median per run (profile)
  double share_pct = 0;  // of the sum over layers
  bool timed = false;    // has a profile row
  bool in_graph = false;
  std::vector<std::string> parts;  // the network's layers fused into it (SplitFusedName)
};

struct TrtGroupRow {
  std::string key;  // a type or a precision
  int64_t layers = 0;
  double time_ms = 0;
  double share_pct = 0;
};

struct TrtReformat {
  std::string name;
  double time_ms = 0;
  double share_pct = 0;
  bool noop = false;     // a NoOp "Reformatting CopyNode": the builder made it free
  std::string origin;    // REFORMAT (inserted by the builder), QDQ (a QuantizeLinear), ...
  std::string from, to;  // input and output Format/Datatype
  std::string from_precision, to_precision;
  std::string producer;                // the layer whose output it converts; "(input binding NAME)"
  std::vector<std::string> consumers;  // the layers that need the converted tensor
};

// One measure over the inferences after warm-up, in ms.
struct TrtStat {
  int64_t n = 0;
  double mean = 0, min = 0, median = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
};

// A figure trtexec printed (Trex's profile metadata) against the same figure recomputed from the
// timing export the way trtexec computes it (percentiles: the sample at index
// n - 1 - floor((1 - p/100) n), no interpolation).
struct TrtCheck {
  std::string key;  // "GPU Compute Time p99"
  double reported = 0, computed = 0;
  bool match = false;    // within 1e-4 relative (trtexec writes 6 significant digits)
  bool rounded = false;  // matches only within the timing export's timestamp step (enqueue)
};

struct TrtLatency {
  bool known = false;
  int64_t records = 0;          // in the timing export
  int64_t warmup_excluded = 0;  // records whose compute started before the warm-up ended
  double warmup_ms = 0;
  bool warmup_from_metadata = false;
  // The step of the export's timestamps (6 significant digits: 0.01 ms past 1 s); enqueue times,
  // differences of two timestamps, are multiples of it.
  double timestamp_step_ms = 0;
  TrtStat compute, enqueue, h2d, d2h, latency;
  double throughput_qps = 0;       // inferences / (last D2H end - first H2D start)
  double host_walltime_s = 0;      // last enqueue end - first enqueue start
  double gpu_compute_total_s = 0;  // sum of compute times
  double gpu_busy_pct = 0;  // throughput x mean compute: how much of the wall the GPU computed
  std::vector<TrtCheck> checks;
  int64_t mismatches = 0;
};

struct TrtEngineAnalysis {
  std::vector<TrtLayerRow> layers;                 // engine order, then profile-only rows
  std::vector<TrtGroupRow> by_type, by_precision;  // largest time first
  std::vector<TrtReformat> reformats;              // largest time first
  double total_ms = 0;                             // sum of the layers' average times
  double reformat_ms = 0;                          // of LayerType Reformat
  double reformat_share_pct = 0;
  int64_t reformat_layers = 0, noop_reformats = 0;
  int64_t fused_layers = 0;  // layers holding two or more of the network's layers
  int64_t weights_bytes = 0;
  int64_t profile_runs = 0;
  int64_t profile_only = 0, graph_only = 0;  // layers in one of the two files only
  TrtLatency latency;
};

// Parts of a fused layer's name: "Conv_5 + Add_6 + Relu_7" -> Conv_5, Add_6, Relu_7;
// "PWN(PWN(Clip_16), Add_17)" -> Clip_16, Add_17; "{ForeignNode[Conv_1...Relu_5]}" ->
// "Conv_1...Relu_5" (a Myelin region named by its first and last node); TensorRT 10's layer
// "Metadata" ("[ONNX Layer: /a/Conv]\x1e[ONNX Layer: /a/Relu]") -> /a/Conv, /a/Relu.
std::vector<std::string> SplitFusedName(std::string_view name);
std::vector<std::string> SplitLayerMetadata(std::string_view metadata);

// Two or more of the network's layers in one, or a Myelin region.
bool IsFusedLayer(const TrtLayerRow& layer);

// Statistics as defined once (base/stats.h: Median, PercentileOfSorted).
TrtStat ComputeTrtStat(std::vector<double> values_ms);

// The warm-up trtexec excluded, from the profile metadata's "Duration" ("3s (+ 200ms warm up)");
// trtexec's default of 200 ms otherwise.
double TrtWarmupMs(const TrtEngine& engine, bool* from_metadata);

StatusOr<TrtEngineAnalysis> AnalyzeTrtEngine(const TrtEngine& engine);

// An engine and its analysis: what the finding rules on engines read
// (analyses/findings/rule_trt_*.cc). Borrows both.
struct TrtEngineResult {
  const TrtEngine* engine = nullptr;
  const TrtEngineAnalysis* analysis = nullptr;
};

// A time given in ms, as FormatDuration writes it ("1.25 ms").
std::string FormatMs(double ms);

}  // namespace sightline
