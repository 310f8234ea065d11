#include "trt/trt_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "base/stats.h"
#include "base/time_units.h"

namespace sightline {
namespace {

constexpr double kDefaultWarmupMs = 200;  // trtexec --warmUp's default

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits at top-level occurrences of `sep` (outside (), [] and {}).
std::vector<std::string_view> SplitTopLevel(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (depth == 0 && s.compare(i, sep.size(), sep) == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + sep.size();
      i = start - 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

void AddParts(std::string_view name, std::vector<std::string>* out) {
  name = Trim(name);
  if (name.empty()) return;
  if (name.size() > 5 && name.substr(0, 4) == "PWN(" && name.back() == ')') {
    // A pointwise fusion: PWN(a, b) or PWN(PWN(a), b + c).
    for (std::string_view p : SplitTopLevel(name.substr(4, name.size() - 5), ", ")) {
      for (std::string_view q : SplitTopLevel(p, " + ")) AddParts(q, out);
    }
    return;
  }
  constexpr std::string_view kForeign = "{ForeignNode[";
  if (name.substr(0, kForeign.size()) == kForeign && name.size() > kForeign.size() + 2 &&
      name.substr(name.size() - 2) == "]}") {
    out->emplace_back(name.substr(kForeign.size(), name.size() - kForeign.size() - 2));
    return;
  }
  out->emplace_back(name);
}

// A per-inference measure of the records after warm-up.
template <typename F>
TrtStat StatOf(const std::vector<const TrtInference*>& records, F measure) {
  std::vector<double> v;
  v.reserve(records.size());
  for (const TrtInference* r : records) v.push_back(measure(*r));
  return ComputeTrtStat(std::move(v));
}

// trtexec's percentile (sampleReporting.cpp findPercentile): a sample, no interpolation.
double TrtexecPercentile(const std::vector<double>& sorted, double p) {
  const auto n = static_cast<int64_t>(sorted.size());
  if (n == 0) return 0;
  const auto exclude = static_cast<int64_t>((1 - p / 100) * static_cast<double>(n));
  return sorted[static_cast<size_t>(std::max<int64_t>(n - 1 - exclude, 0))];
}

void AddChecks(const TrtEngine& engine, const std::vector<const TrtInference*>& records,
               TrtLatency& lat) {
  // Enqueue times are differences of two rounded timestamps: within one step they agree.
  const double enqueue_tolerance = lat.timestamp_step_ms;
  if (!engine.metadata) return;
  const auto& perf = engine.metadata->performance;
  struct Measure {
    const char* key;  // performance_summary's
    double (*get)(const TrtInference&);
  };
  const Measure measures[] = {
      {"GPU Compute Time", [](const TrtInference& r) { return r.compute_ms; }},
      {"Enqueue Time", [](const TrtInference& r) { return r.end_enq_ms - r.start_enq_ms; }},
      {"H2D Latency", [](const TrtInference& r) { return r.h2d_ms; }},
      {"D2H Latency", [](const TrtInference& r) { return r.d2h_ms; }},
      {"Latency", [](const TrtInference& r) { return r.latency_ms; }},
  };
  for (const Measure& m : measures) {
    auto it = perf.find(m.key);
    if (it == perf.end() || (it->second.size() != 5 && it->second.size() != 7)) continue;
    std::vector<double> v;
    for (const TrtInference* r : records) v.push_back(m.get(*r));
    std::sort(v.begin(), v.end());
    long double sum = 0;
    for (double x : v) sum += x;
    const double mean = v.empty() ? 0 : static_cast<double>(sum / v.size());
    // [min, max, mean, median, p99] (older trtexec) or [..., p90, p95, p99].
    std::vector<std::pair<std::string, double>> computed = {
        {"min", v.front()}, {"max", v.back()}, {"mean", mean}, {"median", Median(v)}};
    if (it->second.size() == 7) {
      computed.push_back({"p90", TrtexecPercentile(v, 90)});
      computed.push_back({"p95", TrtexecPercentile(v, 95)});
    }
    computed.push_back({"p99", TrtexecPercentile(v, 99)});
    for (size_t i = 0; i < computed.size(); ++i) {
      TrtCheck& c = lat.checks.emplace_back();
      c.key = fmt::format("{} {}", m.key, computed[i].first);
      c.reported = it->second[i];
      c.computed = computed[i].second;
      c.match = std::fabs(c.computed - c.reported) <= 1e-4 * std::max(std::fabs(c.reported), 1e-3);
      if (!c.match && std::string_view(m.key) == "Enqueue Time" &&
          std::fabs(c.computed - c.reported) <= enqueue_tolerance) {
        c.match = true;
        c.rounded = true;
      }
      lat.mismatches += !c.match;
    }
  }
  auto thr = perf.find("Throughput");
  if (thr != perf.end() && thr->second.size() == 1) {
    TrtCheck& c = lat.checks.emplace_back();
    c.key = "Throughput (qps)";
    c.reported = thr->second[0];
    c.computed = lat.throughput_qps;
    c.match = std::fabs(c.computed - c.reported) <= 1e-4 * std::fabs(c.reported);
    lat.mismatches += !c.match;
  }
}

TrtLatency ComputeLatency(const TrtEngine& engine) {
  TrtLatency lat;
  if (!engine.timing || engine.timing->inferences.empty()) return lat;
  const std::vector<TrtInference>& all = engine.timing->inferences;
  lat.known = true;
  lat.records = static_cast<int64_t>(all.size());
  lat.warmup_ms = TrtWarmupMs(engine, &lat.warmup_from_metadata);
  std::vector<const TrtInference*> kept;
  for (const TrtInference& r : all) {
    if (r.start_compute_ms >= lat.warmup_ms) kept.push_back(&r);
  }
  if (kept.empty()) {  // a run shorter than the warm-up: keep everything
    for (const TrtInference& r : all) kept.push_back(&r);
    lat.warmup_ms = 0;
  }
  lat.warmup_excluded = lat.records - static_cast<int64_t>(kept.size());
  // trtexec writes 6 significant digits: past 1000 ms a timestamp steps by 0.01 ms.
  double last_ms = 0;
  for (const TrtInference& r : all) last_ms = std::max(last_ms, r.end_d2h_ms);
  lat.timestamp_step_ms = last_ms >= 1 ? std::pow(10.0, std::floor(std::log10(last_ms)) - 5) : 1e-6;
  lat.compute = StatOf(kept, [](const TrtInference& r) { return r.compute_ms; });
  lat.enqueue = StatOf(kept, [](const TrtInference& r) { return r.end_enq_ms - r.start_enq_ms; });
  lat.h2d = StatOf(kept, [](const TrtInference& r) { return r.h2d_ms; });
  lat.d2h = StatOf(kept, [](const TrtInference& r) { return r.d2h_ms; });
  lat.latency = StatOf(kept, [](const TrtInference& r) { return r.latency_ms; });
  const double bench_ms = kept.back()->end_d2h_ms - kept.front()->start_h2d_ms;
  if (bench_ms > 0) lat.throughput_qps = static_cast<double>(kept.size()) / bench_ms * 1e3;
  lat.host_walltime_s = (kept.back()->end_enq_ms - kept.front()->start_enq_ms) / 1e3;
  long double compute = 0;
  for (const TrtInference* r : kept) compute += r->compute_ms;
  lat.gpu_compute_total_s = static_cast<double>(compute / 1e3);
  lat.gpu_busy_pct = lat.throughput_qps * lat.compute.mean / 1e3 * 100;
  AddChecks(engine, kept, lat);
  return lat;
}

std::vector<TrtGroupRow> Group(const std::vector<TrtLayerRow>& layers, double total_ms,
                               std::string TrtLayerRow::*key) {
  std::map<std::string, TrtGroupRow> groups;
  for (const TrtLayerRow& l : layers) {
    const std::string k = (l.*key).empty() ? "(unknown)" : l.*key;
    TrtGroupRow& g = groups[k];
    g.key = k;
    ++g.layers;
    g.time_ms += l.time_ms;
  }
  std::vector<TrtGroupRow> out;
  for (auto& [k, g] : groups) {
    g.share_pct = total_ms > 0 ? g.time_ms / total_ms * 100 : 0;
    out.push_back(g);
  }
  std::stable_sort(out.begin(), out.end(), [](const TrtGroupRow& a, const TrtGroupRow& b) {
    return a.time_ms != b.time_ms ? a.time_ms > b.time_ms : a.layers > b.layers;
  });
  return out;
}

bool IsReformatCopyNode(std::string_view name) {
  return name.substr(0, 19) == "Reformatting CopyNo";
}

}  // namespace

std::vector<std::string> SplitFusedName(std::string_view name) {
  std::vector<std::string> out;
  if (IsReformatCopyNode(name)) {  // "... to Conv_5 + Add_6" names the layer it feeds
    out.emplace_back(name);
    return out;
  }
  for (std::string_view p : SplitTopLevel(name, " + ")) AddParts(p, &out);
  return out;
}

std::vector<std::string> SplitLayerMetadata(std::string_view metadata) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= metadata.size()) {
    const size_t end = std::min(metadata.find('\x1e', pos), metadata.size());
    std::string_view p = Trim(metadata.substr(pos, end - pos));
    constexpr std::string_view kOnnx = "[ONNX Layer: ";
    if (p.substr(0, kOnnx.size()) == kOnnx && p.back() == ']') {
      p = p.substr(kOnnx.size(), p.size() - kOnnx.size() - 1);
    }
    if (!p.empty()) out.emplace_back(p);
    pos = end + 1;
  }
  return out;
}

bool IsFusedLayer(const TrtLayerRow& layer) {
  return layer.parts.size() >= 2 || layer.type == "Myelin" ||
         layer.name.rfind("{ForeignNode[", 0) == 0;
}

TrtStat ComputeTrtStat(std::vector<double> v) {
  TrtStat s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.n = static_cast<int64_t>(v.size());
  long double sum = 0;
  for (double x : v) sum += x;
  s.mean = static_cast<double>(sum / v.size());
  s.min = v.front();
  s.max = v.back();
  s.median = Median(v);
  s.p90 = PercentileOfSorted(v, 90);
  s.p95 = PercentileOfSorted(v, 95);
  s.p99 = PercentileOfSorted(v, 99);
  return s;
}

double TrtWarmupMs(const TrtEngine& engine, bool* from_metadata) {
  *from_metadata = false;
  if (engine.metadata) {
    auto it = engine.metadata->inference_options.find("Duration");
    if (it != engine.metadata->inference_options.end()) {
      // "3s (+ 200ms warm up)"
      const std::string& d = it->second;
      const size_t plus = d.find("(+ ");
      const size_t ms = d.find("ms warm up");
      if (plus != std::string::npos && ms != std::string::npos && ms > plus + 3) {
        try {
          size_t used = 0;
          const std::string number = d.substr(plus + 3, ms - plus - 3);
          const double v = std::stod(number, &used);
          if (used == number.size() && v >= 0) {
            *from_metadata = true;
            return v;
          }
        } catch (const std::exception&) {
        }
      }
    }
  }
  return kDefaultWarmupMs;
}

StatusOr<TrtEngineAnalysis> AnalyzeTrtEngine(const TrtEngine& engine) {
  TrtEngineAnalysis a;
  std::unordered_map<std::string, size_t> index;        // layer name -> row
  std::unordered_map<std::string, size_t> producer_of;  // tensor name -> layer row
  if (engine.graph) {
    for (const TrtLayer& l : engine.graph->layers) {
      TrtLayerRow& r = a.layers.emplace_back();
      r.name = l.name;
      r.type = l.type;
      r.origin = l.origin;
      r.tactic = l.tactic;
      r.in_graph = true;
      if (!l.outputs.empty()) r.precision = l.outputs.front().precision;
      r.parts = l.metadata.empty() ? SplitFusedName(l.name) : SplitLayerMetadata(l.metadata);
      a.weights_bytes += l.weights_bytes;
      index.emplace(l.name, a.layers.size() - 1);
      for (const TrtTensor& t : l.outputs) producer_of.emplace(t.name, a.layers.size() - 1);
    }
  }
  if (engine.profile) {
    a.profile_runs = engine.profile->count;
    for (const TrtProfileRow& p : engine.profile->rows) {
      auto it = index.find(p.name);
      TrtLayerRow* r = nullptr;
      if (it == index.end()) {
        r = &a.layers.emplace_back();
        r->name = p.name;
        r->parts = SplitFusedName(p.name);
        index.emplace(p.name, a.layers.size() - 1);
        a.profile_only += engine.graph.has_value();
      } else {
        r = &a.layers[it->second];
      }
      r->timed = true;
      r->time_ms += p.average_ms;  // a name profiled twice (never seen) adds up
      r->median_ms += p.median_ms;
    }
  }
  for (TrtLayerRow& r : a.layers) {
    a.total_ms += r.time_ms;
    if (engine.profile && r.in_graph && !r.timed) ++a.graph_only;
  }
  for (TrtLayerRow& r : a.layers) {
    r.share_pct = a.total_ms > 0 ? r.time_ms / a.total_ms * 100 : 0;
    a.fused_layers += IsFusedLayer(r);
  }
  a.by_type = Group(a.layers, a.total_ms, &TrtLayerRow::type);
  a.by_precision = Group(a.layers, a.total_ms, &TrtLayerRow::precision);

  // Reformats: LayerType Reformat, and the builder's copy nodes it turned into NoOps.
  if (engine.graph) {
    std::unordered_map<std::string, std::vector<std::string>> consumers_of;  // tensor -> layers
    for (const TrtLayer& l : engine.graph->layers) {
      for (const TrtTensor& t : l.inputs) consumers_of[t.name].push_back(l.name);
    }
    for (size_t i = 0; i < engine.graph->layers.size(); ++i) {
      const TrtLayer& l = engine.graph->layers[i];
      const TrtLayerRow& row = a.layers[i];
      const bool reformat = l.type == "Reformat";
      const bool noop = l.type == "NoOp" && IsReformatCopyNode(l.name);
      if (!reformat && !noop) continue;
      TrtReformat& f = a.reformats.emplace_back();
      f.name = l.name;
      f.time_ms = row.time_ms;
      f.share_pct = row.share_pct;
      f.noop = noop;
      f.origin = l.origin;
      if (!l.inputs.empty()) {
        const TrtTensor& in = l.inputs.front();
        f.from = in.format;
        f.from_precision = in.precision;
        auto p = producer_of.find(in.name);
        f.producer = p != producer_of.end() ? a.layers[p->second].name
                                            : fmt::format("(input binding {})", in.name);
      }
      if (!l.outputs.empty()) {
        const TrtTensor& out = l.outputs.front();
        f.to = out.format;
        f.to_precision = out.precision;
        auto c = consumers_of.find(out.name);
        if (c != consumers_of.end()) f.consumers = c->second;
        if (f.consumers.empty())
          f.consumers.push_back(fmt::format("(output binding {})", out.name));
      }
      if (reformat) {
        ++a.reformat_layers;
        a.reformat_ms += row.time_ms;
      } else {
        ++a.noop_reformats;
      }
    }
    std::stable_sort(
        a.reformats.begin(), a.reformats.end(),
        [](const TrtReformat& x, const TrtReformat& y) { return x.time_ms > y.time_ms; });
  }
  a.reformat_share_pct = a.total_ms > 0 ? a.reformat_ms / a.total_ms * 100 : 0;
  a.latency = ComputeLatency(engine);
  return a;
}

std::string FormatMs(double ms) { return FormatDuration(static_cast<DurationNs>(ms * kNsPerMs)); }

}  // namespace sightline
