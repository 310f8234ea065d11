#include "trt/trt_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "base/time_units.h"
#include "importers/trt_engine/trt_engine.h"

namespace sightline {
namespace {

Value Num(double v) { return std::isfinite(v) ? Value(v) : Value(); }

double ChangePct(double before, double after) {
  return before > 0 ? (after / before - 1) * 100 : std::nan("");
}

// Parts that name the network's layers; weights, biases and Q/DQ nodes say nothing of which.
bool IsIdentifyingPart(const std::string& p) {
  auto ends = [&p](std::string_view s) {
    return p.size() >= s.size() && p.compare(p.size() - s.size(), s.size(), s) == 0;
  };
  return !(ends(".weight") || ends(".bias") || p.rfind("QuantizeLinear", 0) == 0 ||
           p.rfind("DequantizeLinear", 0) == 0 || p.rfind("Reformatting CopyNode", 0) == 0);
}

struct GroupPair {
  int64_t layers_before = 0, layers_after = 0;
  double before_ms = 0, after_ms = 0;
};

void AddGroupTable(Section& s, const char* key, const char* title, const char* group_title,
                   const std::vector<TrtGroupRow>& b, const std::vector<TrtGroupRow>& a) {
  std::map<std::string, GroupPair> groups;
  for (const TrtGroupRow& g : b) {
    groups[g.key].layers_before = g.layers;
    groups[g.key].before_ms = g.time_ms;
  }
  for (const TrtGroupRow& g : a) {
    groups[g.key].layers_after = g.layers;
    groups[g.key].after_ms = g.time_ms;
  }
  std::vector<std::pair<std::string, GroupPair>> rows(groups.begin(), groups.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return std::fabs(x.second.after_ms - x.second.before_ms) >
           std::fabs(y.second.after_ms - y.second.before_ms);
  });
  Table& t = s.AddTable(key, title,
                        {{"group", group_title, Unit::kText},
                         {"layers_before", "Layers before", Unit::kCount},
                         {"layers_after", "Layers after", Unit::kCount},
                         {"before_ns", "Before", Unit::kDurationNs},
                         {"after_ns", "After", Unit::kDurationNs},
                         {"delta_ns", "Change", Unit::kDurationNs},
                         {"change_pct", "Change %", Unit::kPercent}});
  for (const auto& [name, g] : rows) {
    t.rows.push_back({name, g.layers_before, g.layers_after, g.before_ms * kNsPerMs,
                      g.after_ms * kNsPerMs, (g.after_ms - g.before_ms) * kNsPerMs,
                      Num(ChangePct(g.before_ms, g.after_ms))});
  }
}

}  // namespace

std::vector<TrtLayerMatch> MatchTrtLayers(const TrtEngineAnalysis& b, const TrtEngineAnalysis& a) {
  std::vector<TrtLayerMatch> out;
  std::vector<bool> used_b(b.layers.size()), used_a(a.layers.size());
  std::unordered_map<std::string, int> by_name;
  for (size_t i = 0; i < b.layers.size(); ++i)
    by_name.emplace(b.layers[i].name, static_cast<int>(i));
  for (size_t j = 0; j < a.layers.size(); ++j) {
    auto it = by_name.find(a.layers[j].name);
    if (it == by_name.end() || used_b[it->second]) continue;
    used_b[it->second] = used_a[j] = true;
    out.push_back({it->second, static_cast<int>(j), "name"});
  }
  // Then by a shared network layer, in engine order.
  std::unordered_map<std::string, int> by_part;
  for (size_t i = 0; i < b.layers.size(); ++i) {
    if (used_b[i]) continue;
    for (const std::string& p : b.layers[i].parts) {
      if (IsIdentifyingPart(p)) by_part.emplace(p, static_cast<int>(i));
    }
  }
  for (size_t j = 0; j < a.layers.size(); ++j) {
    if (used_a[j]) continue;
    for (const std::string& p : a.layers[j].parts) {
      if (!IsIdentifyingPart(p)) continue;
      auto it = by_part.find(p);
      if (it == by_part.end() || used_b[it->second]) continue;
      used_b[it->second] = used_a[j] = true;
      out.push_back({it->second, static_cast<int>(j), "parts"});
      break;
    }
  }
  // Last, per layer type with as many layers left on both sides: in engine order (two exports of
  // one network whose nodes were numbered differently, e.g. FP16 against its QAT version).
  std::map<std::string, std::pair<std::vector<int>, std::vector<int>>> left;
  for (size_t i = 0; i < b.layers.size(); ++i) {
    if (!used_b[i] && !b.layers[i].type.empty()) {
      left[b.layers[i].type].first.push_back(static_cast<int>(i));
    }
  }
  for (size_t j = 0; j < a.layers.size(); ++j) {
    if (!used_a[j] && !a.layers[j].type.empty()) {
      left[a.layers[j].type].second.push_back(static_cast<int>(j));
    }
  }
  for (const auto& [type, sides] : left) {
    if (sides.first.size() != sides.second.size()) continue;
    for (size_t k = 0; k < sides.first.size(); ++k) {
      used_b[sides.first[k]] = used_a[sides.second[k]] = true;
      out.push_back({sides.first[k], sides.second[k], "type order"});
    }
  }
  for (size_t i = 0; i < b.layers.size(); ++i) {
    if (!used_b[i]) out.push_back({static_cast<int>(i), -1, ""});
  }
  for (size_t j = 0; j < a.layers.size(); ++j) {
    if (!used_a[j]) out.push_back({-1, static_cast<int>(j), ""});
  }
  return out;
}

void AddTrtDiff(const TrtEngineAnalysis& b, const TrtEngineAnalysis& a,
                const TrtDiffOptions& options, Report& report) {
  Section& s = report.AddSection("trt_diff", "TensorRT engines: candidate against baseline", -1);
  const bool timed = b.latency.known && a.latency.known;
  if (timed) {
    s.AddFact("compute_mean_before_ns", "GPU compute, mean (baseline)",
              b.latency.compute.mean * kNsPerMs, Unit::kDurationNs);
    s.AddFact("compute_mean_after_ns", "GPU compute, mean (candidate)",
              a.latency.compute.mean * kNsPerMs, Unit::kDurationNs);
    s.AddFact("compute_mean_change_pct", "GPU compute change",
              Num(ChangePct(b.latency.compute.mean, a.latency.compute.mean)), Unit::kPercent);
    s.AddFact("throughput_before_qps", "Throughput (baseline, inferences/s)",
              b.latency.throughput_qps, Unit::kNumber);
    s.AddFact("throughput_after_qps", "Throughput (candidate, inferences/s)",
              a.latency.throughput_qps, Unit::kNumber);
  }
  s.AddFact("layer_time_before_ns", "Sum of per-layer times (baseline)", b.total_ms * kNsPerMs,
            Unit::kDurationNs);
  s.AddFact("layer_time_after_ns", "Sum of per-layer times (candidate)", a.total_ms * kNsPerMs,
            Unit::kDurationNs);
  s.AddFact("layer_time_change_pct", "Per-layer time change",
            Num(ChangePct(b.total_ms, a.total_ms)), Unit::kPercent);
  s.AddFact("layers_before", "Layers (baseline)", static_cast<int64_t>(b.layers.size()),
            Unit::kCount);
  s.AddFact("layers_after", "Layers (candidate)", static_cast<int64_t>(a.layers.size()),
            Unit::kCount);
  s.AddFact("reformat_share_before_pct", "Reformat share (baseline)", b.reformat_share_pct,
            Unit::kPercent);
  s.AddFact("reformat_share_after_pct", "Reformat share (candidate)", a.reformat_share_pct,
            Unit::kPercent);
  AddGroupTable(s, "by_type", "By layer type (largest change first)", "Type", b.by_type, a.by_type);
  AddGroupTable(s, "by_precision", "By precision", "Precision", b.by_precision, a.by_precision);

  const std::vector<TrtLayerMatch> matches = MatchTrtLayers(b, a);
  int64_t by_name = 0, by_parts = 0, by_order = 0, appeared = 0, vanished = 0,
          precision_changes = 0;
  std::vector<const TrtLayerMatch*> matched, only_b, only_a;
  for (const TrtLayerMatch& m : matches) {
    if (m.baseline >= 0 && m.candidate >= 0) {
      matched.push_back(&m);
      (m.how == "name" ? by_name : m.how == "parts" ? by_parts : by_order) += 1;
      precision_changes += b.layers[m.baseline].precision != a.layers[m.candidate].precision;
    } else if (m.baseline >= 0) {
      only_b.push_back(&m);
      ++vanished;
    } else {
      only_a.push_back(&m);
      ++appeared;
    }
  }
  s.AddFact("matched_by_name", "Layers matched by name", by_name, Unit::kCount);
  s.AddFact("matched_by_parts", "Layers matched by a fused network layer", by_parts, Unit::kCount);
  s.AddFact("matched_by_order", "Layers matched by order within their type", by_order,
            Unit::kCount);
  s.AddFact("vanished", "Layers only in the baseline", vanished, Unit::kCount);
  s.AddFact("appeared", "Layers only in the candidate", appeared, Unit::kCount);
  s.AddFact("precision_changes", "Matched layers whose precision changed", precision_changes,
            Unit::kCount);

  auto delta = [&](const TrtLayerMatch* m) {
    return a.layers[m->candidate].time_ms - b.layers[m->baseline].time_ms;
  };
  std::stable_sort(matched.begin(), matched.end(),
                   [&](const TrtLayerMatch* x, const TrtLayerMatch* y) {
                     return std::fabs(delta(x)) > std::fabs(delta(y));
                   });
  Table& t = s.AddTable("layers", "Matched layers (largest change first)",
                        {{"name", "Layer (candidate)", Unit::kText},
                         {"type", "Type", Unit::kText},
                         {"precision_before", "Precision before", Unit::kText},
                         {"precision_after", "Precision after", Unit::kText},
                         {"before_ns", "Before", Unit::kDurationNs},
                         {"after_ns", "After", Unit::kDurationNs},
                         {"change_pct", "Change", Unit::kPercent},
                         {"matched_by", "Matched by", Unit::kText},
                         {"baseline_name", "Layer (baseline)", Unit::kText, true}});
  for (const TrtLayerMatch* m : matched) {
    if (static_cast<int>(t.rows.size()) >= options.top_n) break;
    const TrtLayerRow& x = b.layers[m->baseline];
    const TrtLayerRow& y = a.layers[m->candidate];
    t.rows.push_back({y.name, y.type, x.precision, y.precision, x.time_ms * kNsPerMs,
                      y.time_ms * kNsPerMs, Num(ChangePct(x.time_ms, y.time_ms)), m->how, x.name});
  }
  if (matched.size() > t.rows.size()) t.total_rows = static_cast<int64_t>(matched.size());

  for (const auto& [key, title, list, side] :
       {std::tuple{"vanished", "Layers only in the baseline (largest first)", &only_b, &b},
        std::tuple{"appeared", "Layers only in the candidate (largest first)", &only_a, &a}}) {
    std::vector<const TrtLayerRow*> rows;
    for (const TrtLayerMatch* m : *list) {
      rows.push_back(&side->layers[side == &b ? m->baseline : m->candidate]);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const TrtLayerRow* x, const TrtLayerRow* y) {
      return x->time_ms > y->time_ms;
    });
    Table& u = s.AddTable(key, title,
                          {{"name", "Layer", Unit::kText},
                           {"type", "Type", Unit::kText},
                           {"precision", "Precision", Unit::kText},
                           {"time_ns", "Time", Unit::kDurationNs}});
    for (const TrtLayerRow* r : rows) {
      if (static_cast<int>(u.rows.size()) >= options.top_n) break;
      u.rows.push_back({r->name, r->type, r->precision, r->time_ms * kNsPerMs});
    }
    if (rows.size() > u.rows.size()) u.total_rows = static_cast<int64_t>(rows.size());
  }
  if (precision_changes > 0) {
    Table& p = s.AddTable("precision_changes", "Precision changes of matched layers",
                          {{"name", "Layer (candidate)", Unit::kText},
                           {"type", "Type", Unit::kText},
                           {"precision_before", "Before", Unit::kText},
                           {"precision_after", "After", Unit::kText},
                           {"change_pct", "Time change", Unit::kPercent}});
    for (const TrtLayerMatch* m : matched) {
      const TrtLayerRow& x = b.layers[m->baseline];
      const TrtLayerRow& y = a.layers[m->candidate];
      if (x.precision == y.precision) continue;
      if (static_cast<int>(p.rows.size()) >= options.top_n) break;
      p.rows.push_back(
          {y.name, y.type, x.precision, y.precision, Num(ChangePct(x.time_ms, y.time_ms))});
    }
    if (precision_changes > static_cast<int64_t>(p.rows.size())) p.total_rows = precision_changes;
  }
  if (by_name + by_parts == 0) {
    s.notes.push_back(
        "no layer matched by name or by a fused network layer: the engines come from differently "
        "named networks (another ONNX export); compare them by type and precision");
  }
  if (by_order > 0) {
    s.notes.push_back(fmt::format(
        "{} layers matched by their order among the layers of their type left unmatched, where "
        "both engines have as many of that type: a guess that holds for two builds of one network",
        by_order));
  }

  if (!options.fail_if_slower_pct) return;
  const double limit = *options.fail_if_slower_pct;
  Section& g = report.AddSection("trt_gate", "Gate (--fail-if-slower)", -1);
  g.AddFact("threshold_pct", "Fails when the engine or a layer type grows by more than", limit,
            Unit::kPercent);
  std::string failed;
  auto check = [&](const std::string& what, double before, double after) {
    const double c = ChangePct(before, after);
    if (std::isfinite(c) && c > limit) {
      failed += fmt::format("{}{} {:+.1f}%", failed.empty() ? "" : "; ", what, c);
    }
  };
  if (timed) {
    check("GPU compute (mean)", b.latency.compute.mean, a.latency.compute.mean);
  } else {
    check("sum of layer times", b.total_ms, a.total_ms);
  }
  std::map<std::string, double> after_type;
  for (const TrtGroupRow& x : a.by_type) after_type[x.key] = x.time_ms;
  for (const TrtGroupRow& x : b.by_type) {
    if (x.share_pct < options.min_share_pct) continue;
    check(fmt::format("type {}", x.key), x.time_ms, after_type[x.key]);
  }
  g.AddFact("result", "Result", std::string(failed.empty() ? "pass" : "FAIL"));
  if (failed.empty()) return;
  g.notes.push_back("worse than allowed: " + failed);
  report.gate.failed = true;
  report.gate.message =
      fmt::format("TensorRT engine slower than allowed (+{:.1f}%): {}", limit, failed);
}

StatusOr<Report> DiffTrtEngines(const std::string& baseline, const std::string& candidate,
                                const TrtDiffOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  TrtEngineAnalysis analyses[2];
  int side = 0;
  for (const std::string* path : {&baseline, &candidate}) {
    ASSIGN_OR_RETURN(TrtEngine engine, ReadTrtEngine(*path));
    ASSIGN_OR_RETURN(analyses[side], AnalyzeTrtEngine(engine));
    ReportInput& in = report.inputs.emplace_back();
    in.label = side == 0 ? "baseline" : "candidate";
    in.path = *path;
    in.format = "tensorrt-engine";
    in.producer = engine.name;
    in.diagnostics = engine.diagnostics;
    ++side;
  }
  AddTrtDiff(analyses[0], analyses[1], options, report);
  return report;
}

}  // namespace sightline
