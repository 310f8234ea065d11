#include "analyses/floor/floor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "analyses/common/analysis_context.h"
#include "analyses/floor/floor_layers.h"
#include "analyses/floor/gemm_shapes.h"
#include "analyses/floor/gpu_peaks.h"
#include "analyses/gpu_metrics/gpu_metrics_intervals.h"
#include "analyses/iteration_log/iteration_log_join.h"
#include "base/file_io.h"
#include "facts/intervals.h"
#include "facts/kernel_category.h"
#include "facts/metric_samples.h"

namespace sightline {
namespace {

// A step's window and where its work comes from.
struct StepWindow {
  int64_t index = 0;
  TimeNs start_ns = 0, end_ns = 0;
  const IterationLogEntry* entry = nullptr;
};

// The step's work from the options, else from the log line; false when neither states it.
bool WorkOf(const FloorOptions& o, const IterationLogEntry* e, StepWork& w, std::string& from) {
  if (o.batch > 0) {
    w.decode_sequences = static_cast<double>(o.batch);
    w.decode_context = static_cast<double>(std::max<int64_t>(o.context, 0)) * w.decode_sequences;
    from = "options";
    return true;
  }
  if (e == nullptr) return false;
  auto get = [e](IterationLogField f) { return e->field(f); };
  const std::optional<int64_t> ctx_reqs = get(IterationLogField::kContextRequests);
  const std::optional<int64_t> ctx_tokens = get(IterationLogField::kContextTokens);
  std::optional<int64_t> gen = get(IterationLogField::kGenerationRequests);
  if (!gen && ctx_reqs.value_or(0) == 0) gen = get(IterationLogField::kActiveRequests);
  if (ctx_reqs.value_or(0) > 0) {
    if (!ctx_tokens || *ctx_tokens <= 0) return false;
    w.prefill_sequences = static_cast<double>(*ctx_reqs);
    w.prefill_tokens = static_cast<double>(*ctx_tokens);
  }
  if (gen && *gen > 0) w.decode_sequences = static_cast<double>(*gen);
  if (w.tokens() <= 0) return false;
  if (o.context >= 0) {
    w.decode_context = static_cast<double>(o.context) * w.decode_sequences;
  } else {
    const std::optional<int64_t> used = get(IterationLogField::kKvBlocksUsed);
    const std::optional<int64_t> per = get(IterationLogField::kKvTokensPerBlock);
    if (used && per && *used > 0 && *per > 0 && w.decode_sequences > 0) {
      // Every cached token (block-rounded) of every sequence, less the prefill tokens.
      w.decode_context =
          std::max(0.0, static_cast<double>(*used) * static_cast<double>(*per) - w.prefill_tokens);
    }
  }
  from = "iteration log";
  return true;
}

// A step's work from its first attention operator's shapes: one query per sequence is a decode
// step over the keys before it, more are a prefill (docs/analyses/floor.md, "Without a config").
StepWork WorkOfShapes(const ShapesWork& sw) {
  StepWork w;
  if (sw.sequences <= 0 || sw.queries <= 0) return w;  // no attention: the batch is unknown
  const double b = static_cast<double>(sw.sequences);
  if (sw.queries == 1) {
    w.decode_sequences = b;
    w.decode_context = b * static_cast<double>(std::max<int64_t>(sw.keys - 1, 0));
  } else {
    w.prefill_sequences = b;
    w.prefill_tokens = b * static_cast<double>(sw.queries);
  }
  return w;
}

std::string FamilyOf(const StepWork& w) {
  if (w.tokens() <= 0) return "unknown";  // a floor from GEMM shapes without attention
  if (w.prefill_tokens > 0 && w.decode_sequences > 0) return "mixed";
  return w.prefill_tokens > 0 ? "prefill" : "decode";
}

std::string FamilyName(const StepWork& w) {
  const std::string family = FamilyOf(w);
  if (family == "unknown") return "steps of unknown batch";
  if (family == "decode") return fmt::format("decode, batch {:.0f}", w.decode_sequences);
  if (family == "prefill") {
    return fmt::format("prefill, {:.0f} tokens in {:.0f} sequences", w.prefill_tokens,
                       w.prefill_sequences);
  }
  return "mixed prefill and decode";
}

FloorPeaks ResolvePeaks(const Trace& trace, int32_t device, const FloorOptions& o,
                        int64_t dtype_bytes) {
  FloorPeaks p;
  const DeviceInfo* info = nullptr;
  for (const DeviceInfo& d : trace.devices) {
    if (d.id == device) info = &d;
  }
  if (info != nullptr) p.device = info->name;
  const GpuPeaks* table = p.device.empty() ? nullptr : FindGpuPeaks(p.device);
  if (table != nullptr) p.table_entry = table->name;
  if (o.peak_bandwidth_gbps > 0) {
    p.memory_gbps = o.peak_bandwidth_gbps;
    p.memory_source = "--peak-bandwidth";
  } else if (table != nullptr) {
    p.memory_gbps = table->memory_gbps;
    p.memory_source = fmt::format("table: {} ({})", table->name, table->source);
  } else if (info != nullptr && info->memory_bandwidth_bytes_per_s > 0) {
    p.memory_gbps = static_cast<double>(info->memory_bandwidth_bytes_per_s) / 1e9;
    p.memory_source = "the trace's device properties";
  }
  if (o.peak_tflops > 0) {
    p.tensor_tflops = o.peak_tflops;
    p.tensor_source = "--peak-tflops";
  } else if (table != nullptr && TensorTflops(*table, dtype_bytes) > 0) {
    p.tensor_tflops = TensorTflops(*table, dtype_bytes);
    p.tensor_source = fmt::format("table: {}, dense {} ({})", table->name,
                                  dtype_bytes == 1   ? "FP8"
                                  : dtype_bytes == 2 ? "BF16/FP16"
                                                     : "TF32",
                                  table->source);
  }
  return p;
}

void Measure(AnalysisContext& context, int32_t device, FloorStep& s) {
  const Trace& trace = context.trace();
  const KernelTable& k = trace.kernels;
  s.wall_ns = s.end_ns - s.start_ns;
  s.busy_ns = BusyWithin(context.gpu().Busy(device), s.start_ns, s.end_ns);
  const auto first = std::lower_bound(k.start_ns.begin(), k.start_ns.end(), s.start_ns);
  DurationNs gemm = 0, graph = 0;
  for (size_t i = static_cast<size_t>(first - k.start_ns.begin());
       i < k.size() && k.start_ns[i] < s.end_ns; ++i) {
    if (k.device[i] != device) continue;
    const DurationNs d = std::min(k.end_ns[i], s.end_ns) - k.start_ns[i];
    const KernelCategory c = context.kernels().Category(k.name[i]);
    if (c == KernelCategory::kGemm || c == KernelCategory::kAttention) gemm += d;
    if (c == KernelCategory::kCudaGraph) graph += d;
  }
  // Overlapping kernels (several streams) can sum past the busy time; the parts stay within it.
  s.gemm_attention_ns = std::min(gemm, s.busy_ns);
  s.whole_graph_ns = std::min(graph, s.busy_ns - s.gemm_attention_ns);
  s.other_ns = s.busy_ns - s.gemm_attention_ns - s.whole_graph_ns;
  s.idle_ns = s.wall_ns - s.busy_ns;
  s.gemm_above_ns = std::max(0.0, static_cast<double>(s.gemm_attention_ns) - s.floor_ns);
}

std::vector<StepWindow> Windows(AnalysisContext& context, const FloorOptions& options,
                                std::string& how) {
  std::vector<StepWindow> windows;
  const IterationLogJoin* found = options.batch <= 0 ? IterationLogJoinOf(context) : nullptr;
  if (found != nullptr) {
    const IterationLogJoin& join = *found;
    if (join.method == IterationLogJoinMethod::kIterationCounter && join.set != nullptr) {
      for (const IterationLogRow& r : join.rows) {
        if (r.trace_index < 0 ||
            r.trace_index >= static_cast<int64_t>(join.set->iterations.size())) {
          continue;
        }
        const Iteration& it = join.set->iterations[static_cast<size_t>(r.trace_index)];
        if (it.warmup) continue;
        windows.push_back({it.index, it.start_ns, it.end_ns, r.entry});
      }
      how = "the iterations, each joined to its iteration-log line by counter";
      return windows;
    }
    if (join.method != IterationLogJoinMethod::kNone) {
      int64_t i = 0;
      for (const IterationLogRow& r : join.rows)
        windows.push_back({i++, r.start_ns, r.end_ns, r.entry});
      how = "the iteration log's lines, placed on the trace by time";
      return windows;
    }
  }
  if (const IterationSet* set = context.loop().MainSet()) {
    for (const Iteration& it : set->iterations) {
      if (!it.warmup) windows.push_back({it.index, it.start_ns, it.end_ns, nullptr});
    }
    how = "the iterations (warm-up steps left out)";
  }
  return windows;
}

// The sampled DRAM and tensor activity over each step and each family's steps, where the trace
// has them.
void AddSampledMetrics(AnalysisContext& context, int32_t device,
                       const std::vector<std::vector<const FloorStep*>>& members,
                       std::vector<FloorStep>& steps, std::vector<FloorFamily>& families) {
  const Trace& trace = context.trace();
  if (trace.counters.size() == 0) return;
  const std::vector<StringId> names = IntervalMetricNames(trace);
  const StringId read = FindMetric(names, trace, "DRAM Read"),
                 write = FindMetric(names, trace, "DRAM Write"),
                 tensor = FindMetric(names, trace, "Tensor Active");
  const MetricSamples& samples = context.samples();
  auto mean = [&](StringId metric, const std::vector<Interval>& over) {
    if (trace.str(metric).empty() || !samples.Has(device, metric)) return -1.0;
    const WeightedFigure w = samples.Over(device, metric, over);
    return w.samples > 0 ? w.mean : -1.0;
  };
  auto dram = [&](const std::vector<Interval>& over) {
    const double r = mean(read, over), w = mean(write, over);
    return r < 0 ? -1 : r + std::max(w, 0.0);
  };
  for (FloorStep& s : steps) {
    const std::vector<Interval> one = {{s.start_ns, s.end_ns}};
    s.dram_pct = dram(one);
    s.tensor_pct = mean(tensor, one);
  }
  for (size_t f = 0; f < families.size(); ++f) {
    std::vector<Interval> over;
    for (const FloorStep* s : members[f]) AppendToUnion(over, s->start_ns, s->end_ns);
    families[f].dram_pct = dram(over);
    families[f].tensor_pct = mean(tensor, over);
  }
}

// What the section says of a floor from GEMM shapes: its source, its rule, what it leaves out.
void AddShapesNotes(const ShapesWork& total, int64_t without_shapes, FloorResult& r) {
  r.weights_from =
      fmt::format("GEMM shapes (record_shapes): {} aten GEMM and attention operators in {} steps",
                  total.ops, r.steps.size());
  r.shape_ops = total.ops;
  r.shape_ops_unreadable = total.unreadable;
  r.notes.push_back(
      "Floor from the GEMM shapes the trace records (no model config, no snapshot): per step, "
      "the outermost aten GEMM and attention operators (linear, mm, addmm, matmul, bmm, "
      "baddbmm, scaled_dot_product_attention; one nested in another is the outer one's work). "
      "FLOPs = 2 x M x N x K (attention: 2 x heads x causal pairs x (qk + v dims)); weight bytes = "
      "the 2-D right-hand operand of linear, mm, addmm and matmul and their 1-D biases (batched "
      "operands are activations); KV bytes read = attention's keys and values. Not counted: the "
      "KV cache written, activations, the embedding and other operators: a lower bound. Steps "
      "are named by their first attention operator (one query per sequence: decode) unless "
      "--batch or an iteration log says; no per-layer floor.");
  if (total.unreadable > 0) {
    r.notes.push_back(fmt::format(
        "{} GEMM or attention operator(s) in the steps have no shapes or shapes that do not fit "
        "the operator: left out of the floor (kineto_shapes_unreadable counts the unreadable).",
        total.unreadable));
  }
  if (without_shapes > 0) {
    r.notes.push_back(fmt::format(
        "{} step(s) left out: no GEMM operator with shapes runs in them (a CUDA graph's replay "
        "records none).",
        without_shapes));
  }
}

}  // namespace

StatusOr<FloorResult> ComputeFloor(AnalysisContext& context, const FloorOptions& options) {
  FloorResult r;
  const std::shared_ptr<const ModelConfig>& model = context.inputs().model;
  // Without a config or a snapshot: the GEMM shapes the trace records, where asked.
  std::unique_ptr<GemmShapeIndex> shapes;
  if (!model && options.asks_for_shapes())
    shapes = std::make_unique<GemmShapeIndex>(context.trace());
  if (!model && (shapes == nullptr || !shapes->any())) {
    r.not_computed =
        shapes == nullptr
            ? "no model config (--model-config) and no memory snapshot's weights"
            : "no model config (--model-config), no memory snapshot's weights "
              "(--weights-snapshot), and the trace records no GEMM shapes (the PyTorch "
              "profiler's record_shapes=True)";
    return r;
  }
  // Without a config's shapes, the weights of a memory snapshot: every step reads them once; no
  // KV cache, no FLOPs.
  const ModelConfig* config = model && model->has_shapes() ? model.get() : nullptr;
  if (shapes != nullptr) {
    r.from_gemm_shapes = true;
    r.model = "unknown (no --model-config)";
    r.weights_from = "GEMM shapes (record_shapes)";  // with the operators counted once computed
    if (shapes->weight_element_bytes() > 0) r.dtype_bytes = shapes->weight_element_bytes();
  } else if (config != nullptr) {
    r.sizes = SizesOf(*config);
    r.dtype_bytes = config->dtype_bytes;
    r.model =
        fmt::format("{}, {} layers, hidden {}, {:.3g} parameters{} ({})", config->model_type,
                    config->num_layers, config->hidden_size, r.sizes.total,
                    config->moe() ? fmt::format(", {:.3g} active per token", r.sizes.active) : "",
                    FileNameOf(config->path));
    r.weights_from = fmt::format("the model config ({})", FileNameOf(config->path));
  } else {
    r.model = "unknown (no --model-config)";
    r.weights_from = fmt::format("the memory snapshot's weights ({})", model->snapshot_weights);
  }
  // The step's device: the busiest one.
  DurationNs most = -1;
  for (int32_t d : context.gpu().GpuDevices()) {
    const DurationNs busy = TotalLength(context.gpu().Busy(d));
    if (busy > most) {
      most = busy;
      r.device = d;
    }
  }
  r.peaks = ResolvePeaks(context.trace(), r.device, options, r.dtype_bytes);
  std::string how;
  const std::vector<StepWindow> windows = Windows(context, options, how);
  if (windows.empty()) {
    r.not_computed = "the trace has no steps (no iterations found, no iteration log joined)";
    return r;
  }
  if (r.device < 0) {
    r.not_computed = "the trace has no GPU work";
    return r;
  }
  if (r.peaks.memory_gbps <= 0) {
    r.not_computed = fmt::format(
        "no memory bandwidth for the device \"{}\": it is not in the table of GPU peaks; give "
        "--peak-bandwidth GB/s (and --peak-tflops)",
        r.peaks.device);
    return r;
  }
  int64_t without_work = 0, without_shapes = 0;
  ShapesWork shaped_total;  // over the steps kept: operators counted and unreadable
  for (const StepWindow& w : windows) {
    FloorStep s;
    s.index = w.index;
    s.start_ns = w.start_ns;
    s.end_ns = w.end_ns;
    const bool work = WorkOf(options, w.entry, s.work, s.work_from);
    if (s.end_ns <= s.start_ns || (!work && shapes == nullptr)) {
      ++without_work;
      continue;
    }
    if (shapes != nullptr) {
      const ShapesWork sw = shapes->Within(s.start_ns, s.end_ns);
      if (sw.ops == 0) {
        ++without_shapes;
        continue;
      }
      shaped_total.ops += sw.ops;
      shaped_total.unreadable += sw.unreadable;
      if (!work) {
        s.work = WorkOfShapes(sw);
        s.work_from = "GEMM shapes";
      }
      s.cost = sw.cost;
    }
    s.family = FamilyOf(s.work);
    s.group = FamilyName(s.work);
    if (config != nullptr) {
      s.cost = CostOf(*config, s.work);
    } else if (shapes == nullptr) {
      s.cost.weight_bytes = static_cast<double>(model->snapshot_weight_bytes);
    }
    s.memory_floor_ns = s.cost.bytes() / r.peaks.memory_gbps;  // bytes / (10^9 B/s) = ns
    s.compute_floor_ns =
        r.peaks.tensor_tflops > 0 ? s.cost.flops() / (r.peaks.tensor_tflops * 1e3) : 0;
    s.floor_ns = std::max(s.memory_floor_ns, s.compute_floor_ns);
    Measure(context, r.device, s);
    r.steps.push_back(std::move(s));
  }
  if (r.steps.empty() && shapes != nullptr) {
    r.not_computed =
        "no step runs a GEMM or attention operator with shapes (the iterations hold none of the "
        "trace's recorded shapes)";
    return r;
  }
  if (r.steps.empty()) {
    r.not_computed =
        "no step's work is known: give --batch (and --context), or an iteration log whose lines "
        "state the generation (and context) requests";
    return r;
  }
  r.computed = true;
  r.notes.push_back(fmt::format("Steps: {}.", how));
  if (without_work > 0) {
    r.notes.push_back(
        fmt::format("{} step(s) left out: their work (batch, prompt tokens) is not "
                    "stated.",
                    without_work));
  }
  if (shapes != nullptr) AddShapesNotes(shaped_total, without_shapes, r);
  if (r.peaks.tensor_tflops <= 0) {
    r.notes.push_back(
        "No tensor throughput for this device and dtype: the floor is the memory "
        "floor alone (give --peak-tflops).");
  }
  // Families: by kind and batch, in order of first appearance.
  std::map<std::string, size_t> index;
  std::vector<std::vector<const FloorStep*>> members;
  for (const FloorStep& s : r.steps) {
    const std::string& name = s.group;
    auto [it, added] = index.emplace(name, r.families.size());
    if (added) {
      r.families.push_back({});
      r.families.back().name = name;
      r.families.back().family = s.family;
      members.emplace_back();
    }
    members[it->second].push_back(&s);
  }
  for (size_t f = 0; f < r.families.size(); ++f) {
    FloorFamily& fam = r.families[f];
    std::vector<double> wall, busy, floor, idle, other, gemm_above, graph;
    double sums[4] = {0, 0, 0, 0};
    for (const FloorStep* s : members[f]) {
      wall.push_back(static_cast<double>(s->wall_ns));
      busy.push_back(static_cast<double>(s->busy_ns));
      floor.push_back(s->floor_ns);
      idle.push_back(static_cast<double>(s->idle_ns));
      other.push_back(static_cast<double>(s->other_ns));
      gemm_above.push_back(s->gemm_above_ns);
      graph.push_back(static_cast<double>(s->whole_graph_ns));
      sums[0] += idle.back();
      sums[1] += other.back();
      sums[2] += gemm_above.back();
      sums[3] += graph.back();
    }
    fam.steps = static_cast<int64_t>(members[f].size());
    static constexpr const char* kParts[] = {
        "GPU idle", "non-GEMM kernels", "GEMM/attention below peak", "CUDA graphs traced whole"};
    const size_t top =
        static_cast<size_t>(std::max_element(std::begin(sums), std::end(sums)) - std::begin(sums));
    fam.holder = kParts[top];
    fam.holder_ns = sums[top];
    fam.idle_ns = Median(idle);
    fam.other_ns = Median(other);
    fam.gemm_above_ns = Median(gemm_above);
    fam.whole_graph_ns = Median(graph);
    fam.median_wall_ns = Median(wall);
    fam.median_busy_ns = Median(busy);
    fam.median_floor_ns = Median(floor);
    // The step whose floor is the median's (the work of a family varies with its context).
    const FloorStep* mid = members[f].front();
    for (const FloorStep* s : members[f]) {
      if (std::abs(s->floor_ns - fam.median_floor_ns) <
          std::abs(mid->floor_ns - fam.median_floor_ns)) {
        mid = s;
      }
    }
    fam.memory_floor_ns = mid->memory_floor_ns;
    fam.compute_floor_ns = mid->compute_floor_ns;
    fam.compute_bound = mid->compute_floor_ns >= mid->memory_floor_ns;
    fam.weight_bytes = mid->cost.weight_bytes;
    fam.kv_bytes = mid->cost.kv_read_bytes + mid->cost.kv_write_bytes;
    fam.flops = mid->cost.flops();
    fam.ratio = fam.median_floor_ns > 0 ? fam.median_wall_ns / fam.median_floor_ns : 0;
    fam.busy_ratio = fam.median_floor_ns > 0 ? fam.median_busy_ns / fam.median_floor_ns : 0;
  }
  AddSampledMetrics(context, r.device, members, r.steps, r.families);
  // Per layer, for every family: the one with the most steady time first (table "layers"), the
  // others after it in order of their steady time.
  std::vector<double> family_wall(members.size(), 0);
  for (size_t f = 0; f < members.size(); ++f) {
    for (const FloorStep* s : members[f]) family_wall[f] += static_cast<double>(s->wall_ns);
  }
  std::vector<size_t> order(members.size());
  for (size_t f = 0; f < order.size(); ++f) order[f] = f;
  std::stable_sort(order.begin(), order.end(),
                   [&family_wall](size_t a, size_t b) { return family_wall[a] > family_wall[b]; });
  std::vector<std::vector<const FloorStep*>> by_time;
  for (size_t f : order) by_time.push_back(members[f]);
  if (config != nullptr && shapes == nullptr) {
    AddFloorLayers(context, *config, by_time, r);
  } else if (shapes == nullptr) {
    r.notes.push_back(
        "Without a model config the floor is the snapshot's weights over the memory bandwidth, "
        "each read once per step: no KV cache, no FLOPs (a memory floor, and for a MoE model an "
        "upper one: a step reads only the experts its tokens reach), and no per-layer floor; give "
        "--model-config for those.");
  }
  bool below = false;
  for (FloorFamily& fam : r.families) {
    if (fam.ratio >= 1) continue;
    fam.holder = "none: below the floor";
    fam.holder_ns = 0;
    below = true;
  }
  if (below) {
    r.notes.push_back(
        "Some steps take less than their floor: the model config, the steps' work (--batch, "
        "--context, the iteration log) or the peaks do not describe this trace; check them.");
  }
  return r;
}

StatusOr<const FloorResult*> CachedFloor(AnalysisContext& context) {
  return context.results().Get<FloorResult>(
      "floor", [&context] { return ComputeFloor(context, context.options().floor); });
}

}  // namespace sightline
