#include "trt/trt_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "base/time_units.h"

namespace sightline {
namespace {

std::string Join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += sep;
    out += v[i];
  }
  return out;
}

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string Option(const std::map<std::string, std::string>& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? std::string() : it->second;
}

std::string Ms(double ms) { return FormatMs(ms); }

void AddEngineSection(const TrtEngine& e, const TrtEngineAnalysis& a, int input, Report& report) {
  Section& s = report.AddSection("trt_engine", "TensorRT engine", input);
  s.AddFact("engine", "Engine", e.name);
  std::vector<std::string> files;
  for (const auto& [kind, path] : e.files) files.push_back(BaseName(path));
  s.AddFact("files", "Files read", Join(files, ", "));
  if (e.metadata) {
    const TrtMetadata& m = *e.metadata;
    if (!m.device.empty()) s.AddFact("device", "Device", m.device);
    if (!m.compute_capability.empty()) {
      s.AddFact("compute_capability", "Compute capability", m.compute_capability);
    }
    if (m.sms > 0) s.AddFact("sms", "SMs", m.sms, Unit::kCount);
    const std::string model = Option(m.model_options, "Model");
    if (!model.empty()) s.AddFact("model", "Model", BaseName(model));
    const std::string precision = Option(m.build_options, "Precision");
    if (!precision.empty()) s.AddFact("build_precision", "Precisions allowed (build)", precision);
    std::string shape = Option(m.inference_options, "Input inference shape");
    if (shape.empty()) shape = Option(m.inference_options, "Input inference shapes");
    if (!shape.empty()) s.AddFact("input_shape", "Input shape (inference)", shape);
    const std::string graph = Option(m.inference_options, "CUDA Graph");
    if (!graph.empty()) s.AddFact("cuda_graph", "CUDA graph (trtexec --useCudaGraph)", graph);
    const std::string transfers = Option(m.inference_options, "Data transfers");
    if (!transfers.empty()) s.AddFact("data_transfers", "Data transfers", transfers);
  }
  s.AddFact("layers", "Layers", static_cast<int64_t>(a.layers.size()), Unit::kCount);
  if (e.profile) {
    s.AddFact("profile_runs", "Profiled runs (per-layer times are averages)", a.profile_runs,
              Unit::kCount);
    s.AddFact("layer_time_ns", "Sum of per-layer times", a.total_ms * kNsPerMs, Unit::kDurationNs);
  }
  s.AddFact("fused_layers", "Fused layers (two or more network layers)", a.fused_layers,
            Unit::kCount);
  if (a.weights_bytes > 0)
    s.AddFact("weights_bytes", "Weights and biases", a.weights_bytes, Unit::kBytes);
  if (e.graph) {
    s.AddFact("reformat_share_pct", "Reformat layers' share of layer time", a.reformat_share_pct,
              Unit::kPercent);
  }
  for (const auto& [key, title, groups] :
       {std::tuple{"by_type", "Layers by type", &a.by_type},
        std::tuple{"by_precision", "Layers by precision (of the first output)", &a.by_precision}}) {
    Table& t =
        s.AddTable(key, title,
                   {{"group", key == std::string("by_type") ? "Type" : "Precision", Unit::kText},
                    {"layers", "Layers", Unit::kCount},
                    {"time_ns", "Time", Unit::kDurationNs},
                    {"share_pct", "Share", Unit::kPercent}});
    for (const TrtGroupRow& g : *groups) {
      t.rows.push_back({g.key, g.layers, g.time_ms * kNsPerMs, g.share_pct});
    }
  }
  if (e.graph && e.graph->names_only) {
    s.notes.push_back(
        "the layer information holds names only: export it with --profilingVerbosity=detailed "
        "for types, precisions and tactics");
  }
  if (a.profile_only > 0) {
    s.notes.push_back(fmt::format(
        "{} profiled layer(s) are not in the engine graph (no type or precision)", a.profile_only));
  }
  if (a.graph_only > 0) {
    s.notes.push_back(fmt::format(
        "{} layer(s) of the graph have no profile row (counted with no time)", a.graph_only));
  }
  if (!e.profile) {
    s.notes.push_back(
        "no per-layer profile (E.profile.json from trtexec --exportProfile): layer times are 0");
  }
}

void AddGraph(const TrtEngine& e, const TrtEngineAnalysis& a, Section& s);

void AddLayersSection(const TrtEngine& e, const TrtEngineAnalysis& a, int input, int top_n,
                      Report& report) {
  Section& s = report.AddSection("trt_layers", "TensorRT layers (largest time first)", input);
  std::vector<const TrtLayerRow*> rows;
  for (const TrtLayerRow& l : a.layers) rows.push_back(&l);
  std::stable_sort(rows.begin(), rows.end(), [](const TrtLayerRow* x, const TrtLayerRow* y) {
    return x->time_ms > y->time_ms;
  });
  Table& t = s.AddTable("layers", "Layers",
                        {{"name", "Layer", Unit::kText},
                         {"type", "Type", Unit::kText},
                         {"precision", "Precision", Unit::kText},
                         {"time_ns", "Time", Unit::kDurationNs},
                         {"median_ns", "Median", Unit::kDurationNs},
                         {"share_pct", "Share", Unit::kPercent},
                         {"tactic", "Tactic", Unit::kText, true}});
  for (const TrtLayerRow* l : rows) {
    if (static_cast<int>(t.rows.size()) >= top_n) break;
    t.rows.push_back({l->name, l->type, l->precision, l->time_ms * kNsPerMs,
                      l->median_ms * kNsPerMs, l->share_pct, l->tactic});
  }
  if (rows.size() > t.rows.size()) t.total_rows = static_cast<int64_t>(rows.size());
  t.note =
      "time: the profile's average per run (trtexec --exportProfile); share: of the sum over "
      "layers";

  Table& f = s.AddTable("fused", "Fused layers and their parts",
                        {{"name", "Layer", Unit::kText},
                         {"type", "Type", Unit::kText},
                         {"time_ns", "Time", Unit::kDurationNs},
                         {"parts", "Parts", Unit::kCount},
                         {"fused", "Network layers fused", Unit::kText}});
  int64_t fused = 0;
  for (const TrtLayerRow* l : rows) {
    if (!IsFusedLayer(*l)) continue;
    ++fused;
    if (static_cast<int>(f.rows.size()) >= top_n) continue;
    f.rows.push_back({l->name, l->type, l->time_ms * kNsPerMs,
                      static_cast<int64_t>(l->parts.size()), Join(l->parts, " | ")});
  }
  if (fused > static_cast<int64_t>(f.rows.size())) f.total_rows = fused;
  f.note =
      "parts from the layer name (\" + \" joins fused layers, PWN(...) a pointwise fusion, "
      "{ForeignNode[A...B]} a Myelin region from A to B) or from TensorRT 10's layer "
      "Metadata";
  AddGraph(e, a, s);
}

// The engine graph: input bindings, layers in engine order, output bindings; an edge per tensor
// from the layer (or binding) that writes it to each layer that reads it.
void AddGraph(const TrtEngine& e, const TrtEngineAnalysis& a, Section& s) {
  if (!e.graph || e.graph->names_only || e.graph->layers.empty()) return;
  const TrtGraph& tg = *e.graph;
  Graph& g = s.graphs.emplace_back();
  g.key = "engine_graph";
  g.title = "Engine graph (colour: share of layer time)";
  std::map<std::string, int> writer;  // tensor -> node
  std::set<std::string> written;
  for (const TrtLayer& l : tg.layers) {
    for (const TrtTensor& t : l.outputs) written.insert(t.name);
  }
  for (const TrtLayer& l : tg.layers) {  // inputs: read, never written
    for (const TrtTensor& t : l.inputs) {
      if (written.count(t.name) || writer.count(t.name)) continue;
      writer[t.name] = static_cast<int>(g.nodes.size());
      GraphNode& n = g.nodes.emplace_back();
      n.label = "input " + t.name;
      n.tooltip = fmt::format("engine input {} ({})", t.name, t.format);
      n.terminal = true;
    }
  }
  double max_share = 0;
  for (size_t i = 0; i < tg.layers.size(); ++i)
    max_share = std::max(max_share, a.layers[i].share_pct);
  for (size_t i = 0; i < tg.layers.size(); ++i) {
    const TrtLayer& l = tg.layers[i];
    const TrtLayerRow& r = a.layers[i];
    const int node = static_cast<int>(g.nodes.size());
    GraphNode& n = g.nodes.emplace_back();
    n.label = l.name;
    n.detail = fmt::format("{} · {} · {} ({:.1f}%)", l.type.empty() ? "?" : l.type,
                           r.precision.empty() ? "?" : r.precision, Ms(r.time_ms), r.share_pct);
    n.tooltip = fmt::format("{}\n{}{}", l.name, l.tactic.empty() ? "" : "tactic " + l.tactic,
                            r.parts.size() >= 2 ? "\nfused: " + Join(r.parts, ", ") : "");
    n.heat = max_share > 0 ? r.share_pct / max_share : 0;
    for (const TrtTensor& t : l.inputs) {
      auto w = writer.find(t.name);
      if (w != writer.end()) g.edges.push_back({w->second, node});
    }
    for (const TrtTensor& t : l.outputs) writer[t.name] = node;
  }
  std::set<std::string> read;
  for (const TrtLayer& l : tg.layers) {
    for (const TrtTensor& t : l.inputs) read.insert(t.name);
  }
  for (const TrtLayer& l : tg.layers) {  // outputs: bindings, or written and never read
    for (const TrtTensor& t : l.outputs) {
      const bool binding =
          std::find(tg.bindings.begin(), tg.bindings.end(), t.name) != tg.bindings.end();
      if (!binding && read.count(t.name)) continue;
      auto w = writer.find(t.name);
      if (w == writer.end()) continue;
      const int node = static_cast<int>(g.nodes.size());
      GraphNode& n = g.nodes.emplace_back();
      n.label = "output " + t.name;
      n.tooltip = fmt::format("engine output {} ({})", t.name, t.format);
      n.terminal = true;
      g.edges.push_back({w->second, node});
    }
  }
  g.note =
      "layers in engine order, each one row below the deepest layer it reads from; hover a "
      "layer for its full name, tactic and fused parts";
}

void AddReformatSection(const TrtEngineAnalysis& a, int input, Report& report) {
  Section& s = report.AddSection("trt_reformats", "TensorRT reformat layers", input);
  s.AddFact("reformat_layers", "Reformat layers", a.reformat_layers, Unit::kCount);
  s.AddFact("reformat_time_ns", "Their time", a.reformat_ms * kNsPerMs, Unit::kDurationNs);
  s.AddFact("reformat_share_pct", "Their share of layer time", a.reformat_share_pct,
            Unit::kPercent);
  int64_t qdq = 0;
  double qdq_ms = 0;
  for (const TrtReformat& r : a.reformats) {
    if (!r.noop && r.origin == "QDQ") ++qdq, qdq_ms += r.time_ms;
  }
  if (qdq > 0) {
    s.AddFact("qdq_reformats", "Of which quantize/dequantize (Origin QDQ)", qdq, Unit::kCount);
    s.AddFact("qdq_time_ns", "Their time", qdq_ms * kNsPerMs, Unit::kDurationNs);
  }
  s.AddFact("noop_reformats", "Reformat copy nodes made free (NoOp)", a.noop_reformats,
            Unit::kCount);
  Table& t = s.AddTable("reformats", "Reformat layers and the layers that need them",
                        {{"name", "Layer", Unit::kText},
                         {"time_ns", "Time", Unit::kDurationNs},
                         {"share_pct", "Share", Unit::kPercent},
                         {"origin", "Origin", Unit::kText},
                         {"from_precision", "From", Unit::kText},
                         {"to_precision", "To", Unit::kText},
                         {"needed_by", "Needed by", Unit::kText},
                         {"producer", "Converts the output of", Unit::kText, true},
                         {"from_format", "From format", Unit::kText, true},
                         {"to_format", "To format", Unit::kText, true}});
  for (const TrtReformat& r : a.reformats) {
    if (r.noop) continue;
    t.rows.push_back({r.name, r.time_ms * kNsPerMs, r.share_pct, r.origin, r.from_precision,
                      r.to_precision, Join(r.consumers, ", "), r.producer, r.from, r.to});
  }
  t.note =
      "Origin REFORMAT: inserted by the builder between layers whose formats differ; QDQ: a "
      "QuantizeLinear of the network run as a reformat. \"Needed by\": the layers that read "
      "the converted tensor (their tactic wants that format)";
}

void AddLatencySection(const TrtEngine& e, const TrtEngineAnalysis& a, int input, Report& report) {
  const TrtLatency& l = a.latency;
  Section& s = report.AddSection("trt_latency", "TensorRT latency (trtexec --exportTimes)", input);
  s.AddFact("records", "Inferences in the timing export", l.records, Unit::kCount);
  s.AddFact("warmup_excluded", "Excluded as warm-up", l.warmup_excluded, Unit::kCount);
  s.AddFact("warmup_ns",
            l.warmup_from_metadata ? "Warm-up (trtexec's, from the metadata)"
                                   : "Warm-up (trtexec's default; no metadata)",
            l.warmup_ms * kNsPerMs, Unit::kDurationNs);
  s.AddFact("throughput_qps", "Throughput (inferences/s)", l.throughput_qps, Unit::kNumber);
  s.AddFact("host_walltime_ns", "Host wall time", l.host_walltime_s * 1e9, Unit::kDurationNs);
  s.AddFact("gpu_compute_total_ns", "GPU compute time (sum)", l.gpu_compute_total_s * 1e9,
            Unit::kDurationNs);
  s.AddFact("gpu_busy_pct", "GPU computing (throughput x mean compute)", l.gpu_busy_pct,
            Unit::kPercent);
  Table& t = s.AddTable("latency", "Per inference",
                        {{"metric", "Metric", Unit::kText},
                         {"n", "N", Unit::kCount},
                         {"mean_ns", "Mean", Unit::kDurationNs},
                         {"min_ns", "Min", Unit::kDurationNs},
                         {"median_ns", "Median", Unit::kDurationNs},
                         {"p90_ns", "P90", Unit::kDurationNs},
                         {"p95_ns", "P95", Unit::kDurationNs},
                         {"p99_ns", "P99", Unit::kDurationNs},
                         {"max_ns", "Max", Unit::kDurationNs}});
  auto row = [&t](const char* name, const TrtStat& x) {
    t.rows.push_back({std::string(name), x.n, x.mean * kNsPerMs, x.min * kNsPerMs,
                      x.median * kNsPerMs, x.p90 * kNsPerMs, x.p95 * kNsPerMs, x.p99 * kNsPerMs,
                      x.max * kNsPerMs});
  };
  row("GPU compute", l.compute);
  row("Enqueue", l.enqueue);
  row("H2D", l.h2d);
  row("D2H", l.d2h);
  row("Latency (end to end)", l.latency);
  t.note = fmt::format(
      "after warm-up; enqueue = endEnqMs - startEnqMs, a difference of two timestamps that the "
      "export rounds to {} (6 significant digits); percentiles interpolate between closest ranks "
      "(docs/metrics.md), where trtexec picks a sample",
      Ms(l.timestamp_step_ms));
  if (!l.checks.empty()) {
    Table& c = s.AddTable("trtexec_check", "trtexec's own figures, recomputed its way",
                          {{"key", "Figure", Unit::kText},
                           {"reported", "trtexec (ms; qps)", Unit::kNumber},
                           {"computed", "Sightline", Unit::kNumber},
                           {"match", "Match", Unit::kText}});
    for (const TrtCheck& k : l.checks) {
      c.rows.push_back({k.key, k.reported, k.computed,
                        std::string(k.rounded ? "yes, within a timestamp step"
                                    : k.match ? "yes"
                                              : "NO")});
    }
    c.note = l.mismatches == 0
                 ? fmt::format("all {} agree (within 1e-4 relative)", l.checks.size())
                 : fmt::format(
                       "{} of {} differ: the metadata may come from another run than the timing "
                       "export, or the warm-up differs",
                       l.mismatches, l.checks.size());
  }
  // What the figures imply.
  if (l.compute.mean > 0 && l.enqueue.mean >= 0.8 * l.compute.mean) {
    s.notes.push_back(fmt::format(
        "enqueue ({} mean) is {} compute ({} mean): the host bounds throughput", Ms(l.enqueue.mean),
        l.enqueue.mean >= l.compute.mean ? "at or above" : "near", Ms(l.compute.mean)));
  }
  if (l.compute.mean > 0 && l.h2d.mean + l.d2h.mean >= l.compute.mean) {
    s.notes.push_back(fmt::format(
        "copies (H2D {} + D2H {} mean) take at least the compute time ({}): the latency measures "
        "the transfers as much as the engine",
        Ms(l.h2d.mean), Ms(l.d2h.mean), Ms(l.compute.mean)));
  }
  if (e.profile && a.total_ms > 0 && l.compute.mean > 0) {
    s.notes.push_back(fmt::format(
        "the per-layer profile sums to {} per run against a mean GPU compute of {} ({:+.1f}%): "
        "profiling times each layer on its own (no CUDA graph, a synchronization per layer), so "
        "use its shares, and this table for the engine's time",
        Ms(a.total_ms), Ms(l.compute.mean), (a.total_ms / l.compute.mean - 1) * 100));
  }
}

}  // namespace

int AddTrtEngineReport(const TrtEngine& e, const TrtEngineAnalysis& a,
                       const TrtReportOptions& options, Report& report) {
  const int input = static_cast<int>(report.inputs.size());
  ReportInput& in = report.inputs.emplace_back();
  in.label = e.name;
  auto first = e.files.begin();
  in.path = first != e.files.end() ? first->second : e.prefix;
  in.format = "tensorrt-engine";
  in.producer = e.metadata ? "trtexec exports + Trex metadata" : "trtexec exports";
  in.diagnostics = e.diagnostics;
  AddEngineSection(e, a, input, report);
  if (!a.layers.empty()) AddLayersSection(e, a, input, options.top_n, report);
  if (e.graph) AddReformatSection(a, input, report);
  if (a.latency.known) AddLatencySection(e, a, input, report);
  return input;
}

}  // namespace sightline
