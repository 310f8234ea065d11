#include "analyses/floor/floor_layers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analyses/common/analysis_context.h"
#include "analyses/gpu_metrics/gpu_metrics_intervals.h"
#include "base/stats.h"
#include "base/strings.h"
#include "facts/graph_kernel_paths.h"
#include "facts/intervals.h"
#include "facts/kernel_category.h"
#include "facts/launch_projection.h"
#include "facts/metric_samples.h"

namespace sightline {
namespace {

constexpr std::string_view kModulePrefix = "nn.module: ";  // PyTorch's with_modules frames

// The last word of a dotted or spaced name: "model.layers" -> "layers".
std::string_view LastWord(std::string_view s) {
  const size_t at = s.find_last_of("./: ");
  return at == std::string_view::npos ? s : s.substr(at + 1);
}

// "layer_3" -> stem "layer", index 3; false when the name does not end in a number.
bool TrailingIndex(std::string_view s, std::string_view& stem, int64_t& index) {
  size_t b = s.size();
  while (b > 0 && std::isdigit(static_cast<unsigned char>(s[b - 1]))) --b;
  if (b == s.size() || s.size() - b > 9) return false;  // no number, or an absurd one
  std::from_chars(s.data() + b, s.data() + s.size(), index);
  stem = s.substr(0, b);
  if (!stem.empty() && std::string_view("._- ").find(stem.back()) != std::string_view::npos) {
    stem.remove_suffix(1);
  }
  return true;
}

}  // namespace

ModelPartName ParseModelPart(std::string_view raw) {
  if (raw.size() > 256) return {};
  std::string lower(raw);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string_view v = lower;
  const bool module = v.substr(0, kModulePrefix.size()) == kModulePrefix;
  if (module) v.remove_prefix(kModulePrefix.size());
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  std::string_view stem;
  int64_t index = -1;
  if (TrailingIndex(v, stem, index)) {
    const std::string_view w = LastWord(stem);
    if (EndsWith(w, "expert") || EndsWith(w, "experts")) return {ModelPart::kExpert, index};
    if (EndsWith(w, "layer") || EndsWith(w, "layers") || w == "block" || w == "blocks" ||
        EndsWith(stem, "transformer.h")) {
      return {ModelPart::kLayer, index};
    }
    // A module frame names its class and instance: "nn.Module: Embedding_0".
    if (module && w == "embedding") return {ModelPart::kEmbedding, -1};
    return {};
  }
  if (module) return {};  // "nn.Module: ..." frames always carry an instance number
  const std::string_view w = LastWord(v);
  if (w == "lm_head" || w == "head" || w == "logits") return {ModelPart::kHead, -1};
  if (w == "embed" || w == "embedding" || w == "embeddings" || w == "embed_tokens" || w == "wte" ||
      w == "tok_embeddings" || w == "word_embeddings") {
    return {ModelPart::kEmbedding, -1};
  }
  return {};
}

namespace {

const FloorLayer* TopLayerIn(const std::vector<FloorLayer>& layers) {
  const FloorLayer* top = nullptr;
  for (const FloorLayer& l : layers) {
    if (l.part != ModelPart::kLayer || l.above_ns <= 0) continue;
    if (top == nullptr || l.above_ns > top->above_ns) top = &l;
  }
  return top;
}

}  // namespace

const FloorLayer* FloorFamilyLayers::TopLayer() const { return TopLayerIn(layers); }

const FloorLayer* FloorResult::TopLayer() const { return TopLayerIn(layers); }

const FloorLayer* FloorResult::TopLayerOf(std::string_view family) const {
  if (family == layers_family) return TopLayer();
  for (const FloorFamilyLayers& f : other_layers) {
    if (f.family == family) return f.TopLayer();
  }
  return nullptr;
}

namespace {

// Where a kernel is: the innermost layer-level part (layer, head, embedding) and the innermost
// expert around it.
struct Place {
  ModelPartName part, expert;
  bool known() const { return part.part != ModelPart::kNone || expert.part != ModelPart::kNone; }
};

Place Combine(Place inner, const ModelPartName& n) {
  if (n.part == ModelPart::kExpert) {
    if (inner.expert.part == ModelPart::kNone) inner.expert = n;
  } else if (n.part != ModelPart::kNone && inner.part.part == ModelPart::kNone) {
    inner.part = n;
  }
  return inner;
}

// The named ranges of each thread, sorted by start, with their parent among them.
class NamedRanges {
 public:
  explicit NamedRanges(const Trace& trace) {
    const RangeTable& r = trace.ranges;
    std::unordered_map<uint32_t, ModelPartName> parsed;
    for (size_t i = 0; i < r.size(); ++i) {
      const RangeKind kind = r.kind[i];
      if (kind == RangeKind::kCpuOp) continue;
      auto [it, added] = parsed.try_emplace(r.name[i].value);
      if (added) {
        const std::string_view name = trace.str(r.name[i]);
        // Python frames count only as PyTorch's module frames.
        const bool frame_ok = kind != RangeKind::kPythonFunction || name.starts_with("nn.Module: ");
        if (frame_ok) it->second = ParseModelPart(name);
      }
      if (it->second.part == ModelPart::kNone || r.end_ns[i] <= r.start_ns[i]) continue;
      threads_[Key(r.pid[i], r.tid[i])].push_back({r.start_ns[i], r.end_ns[i], it->second, -1});
      any_ = true;
    }
    for (auto& [key, entries] : threads_) {
      std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
      });
      std::vector<int32_t> open;
      for (size_t i = 0; i < entries.size(); ++i) {
        while (!open.empty() && entries[static_cast<size_t>(open.back())].end <= entries[i].start)
          open.pop_back();
        entries[i].parent = open.empty() ? -1 : open.back();
        open.push_back(static_cast<int32_t>(i));
      }
    }
  }

  bool any() const { return any_; }

  Place At(int32_t pid, int32_t tid, TimeNs t) const {
    Place p;
    const auto it = threads_.find(Key(pid, tid));
    if (it == threads_.end()) return p;
    const std::vector<Entry>& e = it->second;
    auto after = std::upper_bound(e.begin(), e.end(), t,
                                  [](TimeNs x, const Entry& en) { return x < en.start; });
    int32_t i = static_cast<int32_t>(after - e.begin()) - 1;
    while (i >= 0 && e[static_cast<size_t>(i)].end <= t) i = e[static_cast<size_t>(i)].parent;
    for (; i >= 0; i = e[static_cast<size_t>(i)].parent)
      p = Combine(p, e[static_cast<size_t>(i)].name);
    return p;
  }

 private:
  struct Entry {
    TimeNs start, end;
    ModelPartName name;
    int32_t parent;
  };
  static int64_t Key(int32_t pid, int32_t tid) {
    return (static_cast<int64_t>(pid) << 32) | static_cast<uint32_t>(tid);
  }
  std::unordered_map<int64_t, std::vector<Entry>> threads_;
  bool any_ = false;
};

// A part's kernels in one step.
struct Acc {
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = std::numeric_limits<TimeNs>::min();
  TimeNs busy_end = std::numeric_limits<TimeNs>::min();
  DurationNs busy = 0, gemm = 0;
  int64_t kernels = 0;
  void Add(TimeNs a, TimeNs b, bool gemm_like) {
    first = std::min(first, a);
    last = std::max(last, b);
    busy += std::max<DurationNs>(0, b - std::max(a, busy_end));
    busy_end = std::max(busy_end, b);
    if (gemm_like) gemm += b - a;
    ++kernels;
  }
};

// (part, layer, expert): the order of the table.
using PartKey = std::tuple<int, int64_t, int64_t>;

struct PartStep {
  const FloorStep* step;
  Acc acc;
};

std::string PartName(const PartKey& k) {
  const auto [part, layer, expert] = k;
  switch (static_cast<ModelPart>(part)) {
    case ModelPart::kLayer:
      return fmt::format("layer {}", layer);
    case ModelPart::kHead:
      return "head";
    case ModelPart::kEmbedding:
      return "embedding";
    case ModelPart::kExpert:
      return layer >= 0 ? fmt::format("layer {} expert {}", layer, expert)
                        : fmt::format("expert {}", expert);
    case ModelPart::kNone:
      break;
  }
  return "";
}

StepCost PartCost(const ModelConfig& c, const StepWork& w, const PartKey& k) {
  switch (static_cast<ModelPart>(std::get<0>(k))) {
    case ModelPart::kLayer:
      return LayerCostOf(c, w, std::get<1>(k));
    case ModelPart::kHead:
      return HeadCostOf(c, w);
    case ModelPart::kEmbedding:
      return EmbeddingCostOf(c, w);
    case ModelPart::kExpert:
      return ExpertCostOf(c, w);
    case ModelPart::kNone:
      break;
  }
  return {};
}

FloorLayer Summarize(const ModelConfig& c, const FloorPeaks& peaks, const PartKey& key,
                     const std::vector<PartStep>& steps) {
  FloorLayer l;
  l.name = PartName(key);
  l.part = static_cast<ModelPart>(std::get<0>(key));
  l.layer = std::get<1>(key);
  l.expert = std::get<2>(key);
  l.steps = static_cast<int64_t>(steps.size());
  std::vector<double> span, busy, idle, other, above_gemm, floor;
  std::vector<StepCost> costs;
  std::vector<double> mem, comp;
  double sums[3] = {0, 0, 0};
  for (const PartStep& ps : steps) {
    const StepCost cost = PartCost(c, ps.step->work, key);
    const double m = cost.bytes() / peaks.memory_gbps;
    const double cf = peaks.tensor_tflops > 0 ? cost.flops() / (peaks.tensor_tflops * 1e3) : 0;
    const double f = std::max(m, cf);
    const Acc& a = ps.acc;
    const DurationNs sp = a.last - a.first;
    const DurationNs gemm = std::min(a.gemm, a.busy);
    span.push_back(static_cast<double>(sp));
    busy.push_back(static_cast<double>(a.busy));
    idle.push_back(static_cast<double>(sp - a.busy));
    other.push_back(static_cast<double>(a.busy - gemm));
    above_gemm.push_back(std::max(0.0, static_cast<double>(gemm) - f));
    floor.push_back(f);
    mem.push_back(m);
    comp.push_back(cf);
    costs.push_back(cost);
    l.kernels += a.kernels;
    l.above_ns += std::max(0.0, static_cast<double>(sp) - f);
    sums[0] += idle.back();
    sums[1] += other.back();
    sums[2] += above_gemm.back();
  }
  l.span_ns = Median(span);
  l.busy_ns = Median(busy);
  l.idle_ns = Median(idle);
  l.other_ns = Median(other);
  l.gemm_above_ns = Median(above_gemm);
  l.floor_ns = Median(floor);
  size_t mid = 0;
  for (size_t i = 0; i < floor.size(); ++i) {
    if (std::abs(floor[i] - l.floor_ns) < std::abs(floor[mid] - l.floor_ns)) mid = i;
  }
  l.memory_floor_ns = mem[mid];
  l.compute_floor_ns = comp[mid];
  l.compute_bound = comp[mid] >= mem[mid] && comp[mid] > 0;
  l.weight_bytes = costs[mid].weight_bytes;
  l.kv_bytes = costs[mid].kv_read_bytes + costs[mid].kv_write_bytes;
  l.flops = costs[mid].flops();
  l.ratio = l.floor_ns > 0 ? l.span_ns / l.floor_ns : 0;
  l.busy_ratio = l.floor_ns > 0 ? l.busy_ns / l.floor_ns : 0;
  static constexpr const char* kParts[] = {"GPU idle", "non-GEMM kernels",
                                           "GEMM/attention below peak"};
  const size_t top =
      static_cast<size_t>(std::max_element(std::begin(sums), std::end(sums)) - std::begin(sums));
  l.holder = l.ratio < 1 ? "none: below the floor" : kParts[top];
  l.holder_ns = l.ratio < 1 ? 0 : sums[top];
  return l;
}

// The sampled DRAM and tensor activity over each part's kernel spans.
void AddLayerMetrics(AnalysisContext& context, int32_t device,
                     const std::map<PartKey, std::vector<PartStep>>& parts,
                     std::vector<FloorLayer>& layers) {
  const Trace& trace = context.trace();
  if (trace.counters.size() == 0) return;
  const std::vector<StringId> names = IntervalMetricNames(trace);
  const StringId read = FindMetric(names, trace, "DRAM Read"),
                 write = FindMetric(names, trace, "DRAM Write"),
                 tensor = FindMetric(names, trace, "Tensor Active");
  const MetricSamples& samples = context.samples();
  for (FloorLayer& l : layers) {
    const auto it = parts.find(PartKey{static_cast<int>(l.part), l.layer, l.expert});
    if (it == parts.end()) continue;
    std::vector<Interval> spans;
    for (const PartStep& ps : it->second) AppendToUnion(spans, ps.acc.first, ps.acc.last);
    auto mean = [&](StringId metric) {
      if (trace.str(metric).empty() || !samples.Has(device, metric)) return -1.0;
      const WeightedFigure w = samples.Over(device, metric, spans);
      return w.samples > 0 ? w.mean : -1.0;
    };
    const double rd = mean(read), wr = mean(write);
    l.dram_pct = rd < 0 ? -1 : rd + std::max(wr, 0.0);
    l.tensor_pct = mean(tensor);
  }
}

// The launching threads of the device's kernels (LaunchIndex's numbering).
std::vector<int32_t> LaunchingThreads(AnalysisContext& context, int32_t device) {
  const Trace& trace = context.trace();
  const KernelTable& k = trace.kernels;
  const ApiCallTable& calls = trace.api_calls;
  const LaunchIndex& launches = context.host().Launches();
  std::vector<int32_t> threads;
  std::set<std::pair<int32_t, int32_t>> seen;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.launch_call[i] == kNoRow || k.device[i] != device) continue;
    const size_t c = static_cast<size_t>(k.launch_call[i]);
    if (seen.insert({calls.pid[c], calls.tid[c]}).second) {
      const int32_t t = launches.ThreadOf(calls.pid[c], calls.tid[c]);
      if (t >= 0) threads.push_back(t);
    }
  }
  return threads;
}

// What the per-family work shares: the trace's named ranges, the graph kernels' places and the
// launching threads.
struct LayerInputs {
  const NamedRanges& named;
  const GraphKernelPaths& gp;
  std::vector<Place> path_place;
  std::vector<int32_t> threads;
};

// One family's parts; false (with a note in out.notes) when its kernels are in no decoder layer.
bool FamilyLayers(AnalysisContext& context, const ModelConfig& config, const LayerInputs& in,
                  const std::vector<const FloorStep*>& family, const FloorResult& r,
                  FloorFamilyLayers& out) {
  const Trace& trace = context.trace();
  const KernelTable& k = trace.kernels;
  const ApiCallTable& calls = trace.api_calls;
  // A step's kernels are those launched inside its window, on any thread (they may run after it:
  // a graph replay's or an asynchronous step's work lies past the host's range).
  const LaunchIndex& launches = context.host().Launches();
  std::map<PartKey, std::vector<PartStep>> parts;
  std::vector<uint32_t> rows;
  for (const FloorStep* s : family) {
    rows.clear();
    for (int32_t t : in.threads) {
      for (uint32_t w : launches.LaunchedIn(t, s->start_ns, s->end_ns)) {
        if (launches.IsKernel(w) && k.device[w] == r.device) rows.push_back(w);
      }
    }
    std::sort(rows.begin(), rows.end(),
              [&k](uint32_t a, uint32_t b) { return k.start_ns[a] < k.start_ns[b]; });
    std::map<PartKey, Acc> step;
    for (const uint32_t i : rows) {
      ++out.family_kernels;
      Place p;
      if (i < in.gp.source.size() && in.gp.source[i] != PathSource::kNone && in.gp.path[i] >= 0) {
        p = in.path_place[static_cast<size_t>(in.gp.path[i])];
        if (p.known()) ++out.placed_by_graph_path;
      } else {
        const size_t c = static_cast<size_t>(k.launch_call[i]);
        p = in.named.At(calls.pid[c], calls.tid[c], calls.start_ns[c]);
        if (p.known()) ++out.placed_by_range;
      }
      if (!p.known()) continue;
      const TimeNs a = k.start_ns[i], b = k.end_ns[i];
      const KernelCategory cat = context.kernels().Category(k.name[i]);
      const bool gemm_like = cat == KernelCategory::kGemm || cat == KernelCategory::kAttention;
      const int64_t layer = p.part.part == ModelPart::kLayer ? p.part.index : -1;
      if (p.part.part != ModelPart::kNone) {
        step[{static_cast<int>(p.part.part), layer, -1}].Add(a, b, gemm_like);
      }
      if (p.expert.part == ModelPart::kExpert) {
        step[{static_cast<int>(ModelPart::kExpert), layer, p.expert.index}].Add(a, b, gemm_like);
      }
    }
    for (auto& [key, acc] : step) parts[key].push_back({s, acc});
  }
  int64_t beyond = 0;
  bool any_layer = false;
  std::vector<FloorLayer> experts;
  for (const auto& [key, steps] : parts) {
    const ModelPart part = static_cast<ModelPart>(std::get<0>(key));
    if (part == ModelPart::kLayer && std::get<1>(key) >= config.num_layers) {
      ++beyond;
      continue;
    }
    if (part == ModelPart::kExpert && !config.moe()) {
      ++beyond;
      continue;
    }
    any_layer |= part == ModelPart::kLayer;
    FloorLayer l = Summarize(config, r.peaks, key, steps);
    (part == ModelPart::kExpert ? experts : out.layers).push_back(std::move(l));
  }
  if (!any_layer) {
    out.layers.clear();
    out.notes.push_back(
        "No per-layer floor: the ranges around this loop's kernels name no decoder layer of the "
        "model.");
    return false;
  }
  out.family = family.front()->group;
  // The experts with the most time above their floor, at most --top of them.
  std::stable_sort(experts.begin(), experts.end(), [](const FloorLayer& a, const FloorLayer& b) {
    return a.above_ns > b.above_ns;
  });
  const size_t keep_experts =
      std::min(experts.size(), static_cast<size_t>(std::max<int64_t>(context.options().top_n, 0)));
  if (keep_experts < experts.size()) {
    out.notes.push_back(fmt::format("Experts: the {} of {} with the most time above their floor.",
                                    keep_experts, experts.size()));
  }
  out.layers.insert(out.layers.end(), std::make_move_iterator(experts.begin()),
                    std::make_move_iterator(experts.begin() + static_cast<long>(keep_experts)));
  if (beyond > 0) {
    out.notes.push_back(fmt::format(
        "{} part(s) named by the ranges are not in the model config ({} layers{}): left out of "
        "the per-layer table.",
        beyond, config.num_layers, config.moe() ? "" : ", no experts"));
  }
  AddLayerMetrics(context, r.device, parts, out.layers);
  return true;
}

}  // namespace

void AddFloorLayers(AnalysisContext& context, const ModelConfig& config,
                    const std::vector<std::vector<const FloorStep*>>& families, FloorResult& r) {
  const Trace& trace = context.trace();
  const NamedRanges named(trace);
  if (!named.any() || families.empty() || families.front().empty()) {
    r.notes.push_back(
        "No per-layer floor: no range of the trace names a layer (NVTX or record_function ranges "
        "such as layer_3 or model.layers.3, PyTorch module frames such as nn.Module: "
        "LlamaDecoderLayer_3; docs/analyses/floor.md, \"Per layer\").");
    return;
  }
  LayerInputs in{named, context.graphs().GraphPaths(), {}, LaunchingThreads(context, r.device)};
  in.path_place.resize(in.gp.paths.size());
  for (size_t p = 0; p < in.gp.components.size(); ++p) {
    for (auto it = in.gp.components[p].rbegin(); it != in.gp.components[p].rend(); ++it) {
      in.path_place[p] = Combine(in.path_place[p], ParseModelPart(*it));
    }
  }
  for (size_t f = 0; f < families.size(); ++f) {
    if (families[f].empty()) continue;
    FloorFamilyLayers out;
    const bool placed = FamilyLayers(context, config, in, families[f], r, out);
    if (f == 0) {
      // The main family: the members the table "layers" and the rule read, its notes the
      // section's.
      r.layers_family = out.family;
      r.layers = std::move(out.layers);
      r.family_kernels = out.family_kernels;
      r.placed_by_range = out.placed_by_range;
      r.placed_by_graph_path = out.placed_by_graph_path;
      r.notes.insert(r.notes.end(), out.notes.begin(), out.notes.end());
    } else if (placed) {
      r.other_layers.push_back(std::move(out));
    }
  }
}

}  // namespace sightline
