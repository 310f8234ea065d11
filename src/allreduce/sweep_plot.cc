#include "allreduce/sweep_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>

#include "allreduce/cost_model.h"
#include "allreduce/sweep_grid.h"
#include "svg/heatmap.h"
#include "svg/line_chart.h"

namespace sightline {
namespace {

using svg::HeatCell;
using svg::Heatmap;
using svg::XmlEscape;

// The categorical colour of a strategy index (0 NCCL, 1 one-shot, 2 two-shot, 3 Lamport).
std::string StrategyColour(int strategy) {
  static const std::array<const char*, kNumArStrategies> kColours = {"#7f8c9b", "#f28e2b",
                                                                     "#4e79a7", "#59a14f"};
  return kColours[static_cast<size_t>(std::clamp(strategy, 0, kNumArStrategies - 1))];
}

std::string Prefix(const SweepKey& k) {
  return fmt::format("w{}_{}_{}_{}", k.world_size, k.dtype, ArFusionName(k.fusion),
                     ArModeName(k.mode));
}

std::string Subtitle(const SweepKey& k) {
  return fmt::format("world size {} | {} | fusion {} | {} mode", k.world_size, k.dtype,
                     ArFusionName(k.fusion), ArModeName(k.mode));
}

// Rows top to bottom: the largest hidden size first, so that size grows upwards.
size_t HiddenIndex(const SweepGrid& g, size_t row) { return g.hidden.size() - 1 - row; }

Heatmap GridFrame(const SweepGrid& g) {
  Heatmap m;
  m.x_title = "tokens";
  m.y_title = "hidden size";
  for (int64_t t : g.tokens) m.columns.push_back(svg::FormatGridValue(t));
  for (size_t r = 0; r < g.hidden.size(); ++r) {
    m.rows.push_back(svg::FormatGridValue(g.hidden[HiddenIndex(g, r)]));
  }
  m.cells.resize(g.hidden.size() * g.tokens.size());
  return m;
}

std::string CellPlace(const SweepGrid& g, size_t h, size_t t) {
  return fmt::format("hidden {}, {} tokens", g.hidden[h], g.tokens[t]);
}

// Positions of log-scale ticks on [lo, hi] for a colour bar; the ends when too few fit.
std::vector<std::pair<double, std::string>> BarTicks(double lo, double hi,
                                                     const std::vector<svg::Tick>& ticks,
                                                     double (*pos)(double, double, double)) {
  std::vector<std::pair<double, std::string>> out;
  for (const svg::Tick& t : ticks) out.emplace_back(pos(t.value, lo, hi), t.label);
  if (out.size() < 2) {
    out = {{0.0, svg::FormatCompact(lo)}, {1.0, svg::FormatCompact(hi)}};
  }
  return out;
}

double LogPos(double v, double lo, double hi) {
  return hi > lo ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : 0.5;
}

// The % slower scale compresses large values so that 1% and 5% stay apart next to 300%.
double SlowPos(double pct, double, double cap) { return std::log1p(pct) / std::log1p(cap); }

std::vector<std::string> Stops(std::string (*scale)(double)) {
  std::vector<std::string> s;
  for (int i = 0; i <= 8; ++i) s.push_back(scale(i / 8.0));
  return s;
}

bool AnyMeasured(const SweepGrid& g, ArStrategy s) {
  const std::vector<double>& v = g.time_us[static_cast<int>(s)];
  return std::any_of(v.begin(), v.end(), [](double x) { return !std::isnan(x); });
}

std::string TimesTooltip(const SweepGrid& g, size_t h, size_t t) {
  std::string out = CellPlace(g, h, t) + ":";
  for (ArStrategy s : kArStrategies) {
    const double v = g.Time(s, h, t);
    if (!std::isnan(v)) out += fmt::format(" {} {} µs;", ArStrategyLabel(s), svg::FormatCompact(v));
  }
  out.pop_back();
  return out;
}

std::string TimeMap(const SweepGrid& g, ArStrategy s) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& v : g.time_us) {
    for (double x : v) {
      if (std::isnan(x)) continue;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  Heatmap m = GridFrame(g);
  m.title = fmt::format("{} all-reduce time (µs)", ArStrategyLabel(s));
  m.subtitle = Subtitle(g.key) + " | log colour scale shared by the strategies | outlined: fastest";
  for (size_t r = 0; r < g.hidden.size(); ++r) {
    const size_t h = HiddenIndex(g, r);
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const double v = g.Time(s, h, t);
      if (std::isnan(v)) continue;
      HeatCell& c = m.cells[r * g.tokens.size() + t];
      c.present = true;
      c.fill = svg::Viridis(LogPos(v, lo, hi));
      c.text = svg::FormatCompact(v);
      c.tooltip = TimesTooltip(g, h, t);
      c.outline = g.Best(h, t) == s;
    }
  }
  m.bar.label = "time (µs)";
  m.bar.stops = Stops(svg::Viridis);
  m.bar.ticks = BarTicks(lo, hi, svg::LogTicks(lo, hi, svg::FormatTick), LogPos);
  return svg::HeatmapSvg(m);
}

// The cost model's choice among the strategies measured in a cell (as `tune` evaluates it).
std::optional<ArStrategy> ModelChoice(const SweepGrid& g, const CostModel& model, size_t h,
                                      size_t t) {
  StrategyMask measured{};
  for (ArStrategy s : kArStrategies) measured[static_cast<int>(s)] = !std::isnan(g.Time(s, h, t));
  return model.Choose(g.key.world_size, g.key.fusion, g.key.mode,
                      g.hidden[h] * g.tokens[t] * ArDtypeBytes(g.key.dtype), measured);
}

std::string BestMap(const SweepGrid& g, const CostModel& model) {
  Heatmap m = GridFrame(g);
  m.title = "Fastest all-reduce strategy";
  m.subtitle = Subtitle(g.key) +
               " | second line: how much slower the runner-up is | outlined: the cost model "
               "chooses otherwise";
  for (size_t r = 0; r < g.hidden.size(); ++r) {
    const size_t h = HiddenIndex(g, r);
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const std::optional<ArStrategy> best = g.Best(h, t);
      if (!best) continue;
      HeatCell& c = m.cells[r * g.tokens.size() + t];
      c.present = true;
      c.fill = StrategyColour(static_cast<int>(*best));
      c.text = std::string(ArStrategyLabel(*best));
      const double second = g.RunnerUpTime(h, t);
      c.sub = std::isnan(second)
                  ? "only one"
                  : "2nd +" + svg::FormatPercent((second / g.Time(*best, h, t) - 1) * 100);
      c.tooltip = TimesTooltip(g, h, t);
      const std::optional<ArStrategy> modelled = ModelChoice(g, model, h, t);
      if (modelled && *modelled != *best) {
        c.outline = true;
        c.tooltip += fmt::format(" | cost model: {}", ArStrategyLabel(*modelled));
      }
    }
  }
  for (ArStrategy s : kArStrategies) {
    if (!AnyMeasured(g, s)) continue;
    m.legend.push_back({StrategyColour(static_cast<int>(s)), std::string(ArStrategyLabel(s))});
  }
  return svg::HeatmapSvg(m);
}

double SlowerPct(const SweepGrid& g, ArStrategy s, size_t h, size_t t) {
  const std::optional<ArStrategy> best = g.Best(h, t);
  const double v = g.Time(s, h, t);
  if (!best || std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
  return (v / g.Time(*best, h, t) - 1) * 100;
}

std::string SlowerMap(const SweepGrid& g, ArStrategy s) {
  double cap = 10;  // one scale for every strategy of the grid, at least 0..10%
  for (ArStrategy o : kArStrategies) {
    for (size_t h = 0; h < g.hidden.size(); ++h) {
      for (size_t t = 0; t < g.tokens.size(); ++t) {
        const double p = SlowerPct(g, o, h, t);
        if (!std::isnan(p)) cap = std::max(cap, p);
      }
    }
  }
  Heatmap m = GridFrame(g);
  m.title = fmt::format("{}: % slower than the fastest strategy", ArStrategyLabel(s));
  m.subtitle = Subtitle(g.key) + " | outlined: this strategy is the fastest";
  for (size_t r = 0; r < g.hidden.size(); ++r) {
    const size_t h = HiddenIndex(g, r);
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const double p = SlowerPct(g, s, h, t);
      if (std::isnan(p)) continue;
      HeatCell& c = m.cells[r * g.tokens.size() + t];
      c.present = true;
      c.fill = svg::HeatRed(SlowPos(p, 0, cap));
      const bool best = g.Best(h, t) == s;
      c.text = best ? "best" : svg::FormatPercent(p);
      c.outline = best;
      c.tooltip = TimesTooltip(g, h, t);
    }
  }
  m.bar.label = "% slower";
  m.bar.stops = Stops(svg::HeatRed);
  for (double v : {0.0, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0}) {
    if (v <= cap) m.bar.ticks.emplace_back(SlowPos(v, 0, cap), fmt::format("{:g}%", v));
  }
  m.bar.ticks.emplace_back(1.0, svg::FormatPercent(cap));
  if (m.bar.ticks.size() >= 2 &&
      m.bar.ticks.back().first - m.bar.ticks[m.bar.ticks.size() - 2].first < 0.08) {
    m.bar.ticks.erase(m.bar.ticks.end() - 2);  // keep the end label readable
  }
  return svg::HeatmapSvg(m);
}

// Diverging blue (t = -1) .. near white (0) .. red (1).
std::string Diverging(double t) {
  t = std::clamp(t, -1.0, 1.0);
  static constexpr int kMid[3] = {0xf7, 0xf7, 0xf7};
  static constexpr int kBlue[3] = {0x21, 0x66, 0xac};
  static constexpr int kRed[3] = {0xb2, 0x18, 0x2b};
  const int* end = t < 0 ? kBlue : kRed;
  const double u = std::abs(t);
  int rgb[3];
  for (int i = 0; i < 3; ++i) {
    rgb[i] = static_cast<int>(std::lround(kMid[i] + (end[i] - kMid[i]) * u));
  }
  return fmt::format("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
}

// A strategy-difference map: ratio = numerator time / denominator time per cell, on a log2
// colour scale symmetric around 1 (blue: the numerator is faster). `numerator` returns the
// time and a second-line label (NaN when not measured).
std::string RatioMap(const SweepGrid& g, const std::string& title, const std::string& faster,
                     const std::string& slower,
                     const std::function<std::pair<double, std::string>(size_t, size_t)>& num,
                     ArStrategy denominator) {
  std::vector<double> ratio(g.hidden.size() * g.tokens.size(),
                            std::numeric_limits<double>::quiet_NaN());
  std::vector<std::string> sub(ratio.size());
  double cap = 1.0;  // |log2 ratio| of the scale's ends: at least 2x either way
  for (size_t h = 0; h < g.hidden.size(); ++h) {
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const auto [v, label] = num(h, t);
      const double d = g.Time(denominator, h, t);
      if (std::isnan(v) || std::isnan(d)) continue;
      ratio[h * g.tokens.size() + t] = v / d;
      sub[h * g.tokens.size() + t] = label;
      cap = std::max(cap, std::abs(std::log2(v / d)));
    }
  }
  Heatmap m = GridFrame(g);
  m.title = title;
  m.subtitle = Subtitle(g.key) + fmt::format(" | < 1: {} faster, > 1: {} faster", faster, slower);
  for (size_t r = 0; r < g.hidden.size(); ++r) {
    const size_t h = HiddenIndex(g, r);
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const double q = ratio[h * g.tokens.size() + t];
      if (std::isnan(q)) continue;
      HeatCell& c = m.cells[r * g.tokens.size() + t];
      c.present = true;
      c.fill = Diverging(std::log2(q) / cap);
      c.text = fmt::format("{:.2f}x", q);
      c.sub = sub[h * g.tokens.size() + t];
      c.tooltip = TimesTooltip(g, h, t);
    }
  }
  m.bar.label = "time ratio";
  for (int i = 0; i <= 8; ++i) m.bar.stops.push_back(Diverging(i / 4.0 - 1.0));
  const double lo = std::exp2(-cap), hi = std::exp2(cap);
  for (double v : {lo, 0.5, 1.0, 2.0, hi}) {
    if (v < lo || v > hi) continue;
    const double pos = (std::log2(v) / cap + 1) / 2;
    if (!m.bar.ticks.empty() && pos - m.bar.ticks.back().first < 0.06) continue;
    m.bar.ticks.emplace_back(pos, fmt::format("{:.2g}x", v));
  }
  return svg::HeatmapSvg(m);
}

// The same comparison as a difference: numerator time minus denominator time per cell, in µs, on
// a symmetric log(1 + |µs|) colour scale (blue: the numerator is faster), the colour of the
// "strategy difference" heatmaps of TensorRT-LLM's all-reduce tools in absolute terms: how many
// microseconds per call the choice is worth in each cell.
std::string DiffMap(const SweepGrid& g, const std::string& title, const std::string& faster,
                    const std::string& slower,
                    const std::function<std::pair<double, std::string>(size_t, size_t)>& num,
                    ArStrategy denominator) {
  std::vector<double> diff(g.hidden.size() * g.tokens.size(),
                           std::numeric_limits<double>::quiet_NaN());
  std::vector<std::string> sub(diff.size());
  double cap = 1.0;  // |µs| at the scale's ends: at least 1 µs either way
  for (size_t h = 0; h < g.hidden.size(); ++h) {
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const auto [v, label] = num(h, t);
      const double d = g.Time(denominator, h, t);
      if (std::isnan(v) || std::isnan(d)) continue;
      diff[h * g.tokens.size() + t] = v - d;
      sub[h * g.tokens.size() + t] = label;
      cap = std::max(cap, std::abs(v - d));
    }
  }
  auto pos = [cap](double us) {  // in [-1, 1]
    return std::copysign(std::log1p(std::abs(us)) / std::log1p(cap), us);
  };
  Heatmap m = GridFrame(g);
  m.title = title;
  m.subtitle = Subtitle(g.key) + fmt::format(" | < 0: {} faster, > 0: {} faster", faster, slower);
  for (size_t r = 0; r < g.hidden.size(); ++r) {
    const size_t h = HiddenIndex(g, r);
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const double d = diff[h * g.tokens.size() + t];
      if (std::isnan(d)) continue;
      HeatCell& c = m.cells[r * g.tokens.size() + t];
      c.present = true;
      c.fill = Diverging(pos(d));
      c.text = (d > 0 ? "+" : d < 0 ? "-" : "") + svg::FormatCompact(std::abs(d));
      c.sub = sub[h * g.tokens.size() + t];
      c.tooltip = TimesTooltip(g, h, t);
    }
  }
  m.bar.label = "time difference (µs)";
  for (int i = 0; i <= 8; ++i) m.bar.stops.push_back(Diverging(i / 4.0 - 1.0));
  for (double v : {-cap, -100.0, -10.0, -1.0, 0.0, 1.0, 10.0, 100.0, cap}) {
    if (std::abs(v) > cap || (std::abs(v) >= cap / 2 && std::abs(v) != cap)) continue;
    const double p = (pos(v) + 1) / 2;
    if (!m.bar.ticks.empty() && p - m.bar.ticks.back().first < 0.06) continue;
    m.bar.ticks.emplace_back(p,
                             v == 0 ? "0" : (v > 0 ? "+" : "-") + svg::FormatCompact(std::abs(v)));
  }
  return svg::HeatmapSvg(m);
}

bool IsCustom(ArStrategy s) { return s != ArStrategy::kNccl; }

std::string SizeChart(const SizeSweep& s, bool busbw) {
  svg::LineChart c;
  c.title = busbw ? "All-reduce bus bandwidth vs message size" : "All-reduce time vs message size";
  c.subtitle = Subtitle(s.key) + (busbw ? " | busbw = algbw x 2(n-1)/n" : "");
  c.x_title = "message size (bytes)";
  c.y_title = busbw ? "bus bandwidth (GB/s)" : "time (µs, log scale)";
  c.log_y = !busbw;
  c.y_format = busbw ? svg::FormatCompact : svg::FormatTick;
  for (ArStrategy st : kArStrategies) {
    const auto& ys = (busbw ? s.busbw_gbps : s.time_us)[static_cast<int>(st)];
    if (std::all_of(ys.begin(), ys.end(), [](double v) { return std::isnan(v); })) continue;
    svg::Line l;
    l.label = std::string(ArStrategyLabel(st));
    l.colour = StrategyColour(static_cast<int>(st));
    for (int64_t b : s.sizes) l.x.push_back(static_cast<double>(b));
    l.y = ys;
    c.lines.push_back(std::move(l));
  }
  return svg::LineChartSvg(c);
}

void Figure(std::string& html, const std::string& file, const std::string& caption) {
  fmt::format_to(std::back_inserter(html),
                 "<figure><a href=\"{0}\"><img src=\"{0}\" alt=\"{1}\"></a><figcaption>{1}"
                 "</figcaption></figure>\n",
                 XmlEscape(file), XmlEscape(caption));
}

// The strategy-difference maps: the best custom kernel against NCCL, then every pair; each as a
// time ratio (_ratio_) and as a time difference in µs (_diff_).
void AddRatioMaps(const SweepGrid& g, const std::string& p, std::vector<PlotFile>& files,
                  std::string& html) {
  std::vector<ArStrategy> present;
  for (ArStrategy s : kArStrategies) {
    if (AnyMeasured(g, s)) present.push_back(s);
  }
  if (present.size() < 2) return;
  using Times = std::function<std::pair<double, std::string>(size_t, size_t)>;
  struct Comparison {
    std::string name;  // "custom_nccl", "twoshot_oneshot"
    std::string a, b;  // labels
    Times num;         // time of A (and a label)
    ArStrategy denominator;
  };
  std::vector<Comparison> comparisons;
  const bool nccl = AnyMeasured(g, ArStrategy::kNccl);
  if (nccl && std::count_if(present.begin(), present.end(), IsCustom) > 0) {
    auto best_custom = [&g](size_t h, size_t t) {
      std::pair<double, std::string> out{std::numeric_limits<double>::quiet_NaN(), ""};
      for (ArStrategy s : kArStrategies) {
        const double v = g.Time(s, h, t);
        if (!IsCustom(s) || std::isnan(v) || v >= out.first) continue;
        out = {v, std::string(ArStrategyLabel(s))};
      }
      return out;
    };
    comparisons.push_back(
        {"custom_nccl", "Best custom kernel", "NCCL", best_custom, ArStrategy::kNccl});
  }
  for (size_t i = 0; i < present.size(); ++i) {
    for (size_t j = i + 1; j < present.size(); ++j) {
      const ArStrategy a = present[j], b = present[i];  // the newer kernel over the older one
      auto time_a = [&g, a](size_t h, size_t t) {
        return std::pair<double, std::string>{g.Time(a, h, t), ""};
      };
      comparisons.push_back({fmt::format("{}_{}", ArStrategyName(a), ArStrategyName(b)),
                             std::string(ArStrategyLabel(a)), std::string(ArStrategyLabel(b)),
                             time_a, b});
    }
  }
  auto short_label = [](const std::string& l) {
    return l == "Best custom kernel" ? std::string("custom") : l;
  };
  html += "<h3>Strategy differences (time ratio per cell)</h3>\n";
  for (const Comparison& c : comparisons) {
    files.push_back({fmt::format("{}_ratio_{}.svg", p, c.name),
                     RatioMap(g, fmt::format("{} / {}: time ratio", c.a, c.b), short_label(c.a),
                              c.b, c.num, c.denominator)});
    Figure(html, files.back().name, fmt::format("{} / {}", c.a, c.b));
  }
  html += "<h3>Strategy differences (time difference per cell, µs)</h3>\n";
  for (const Comparison& c : comparisons) {
    files.push_back({fmt::format("{}_diff_{}.svg", p, c.name),
                     DiffMap(g, fmt::format("{} - {}: time difference (µs)", c.a, c.b),
                             short_label(c.a), c.b, c.num, c.denominator)});
    Figure(html, files.back().name, fmt::format("{} - {} (µs)", c.a, c.b));
  }
}

}  // namespace

StatusOr<std::vector<PlotFile>> PlotSweep(const std::vector<SweepRow>& rows,
                                          const std::vector<std::string>& sources) {
  const std::vector<SweepGrid> grids = BuildSweepGrids(rows);
  const std::vector<SizeSweep> sweeps = BuildSizeSweeps(rows);
  if (grids.empty() && sweeps.empty()) {
    return InvalidInputError("the sweep has a header but no rows: nothing to plot");
  }
  std::vector<PlotFile> files;
  std::map<std::string, CostModel> models;  // per dtype
  for (const SweepGrid& g : grids) {
    if (!models.count(g.key.dtype)) models[g.key.dtype] = CostModel::Fit(rows, g.key.dtype);
  }
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>All-reduce sweep</title>\n<style>body{font-family:Helvetica,Arial,sans-serif;"
      "margin:24px;color:#222}h2{margin-top:36px;border-bottom:1px solid #ccc}"
      "figure{display:inline-block;margin:8px;vertical-align:top}img{max-width:100%;"
      "border:1px solid #ddd}figcaption{font-size:13px;color:#555}</style>\n</head><body>\n"
      "<h1>All-reduce sweep</h1>\n<p>Sources:";
  for (const std::string& s : sources) {
    html += " <code>" + XmlEscape(std::filesystem::path(s).filename().string()) + "</code>";
  }
  html +=
      ". Generated by <code>sightline allreduce plot</code>; docs/allreduce.md explains the "
      "plots.</p>\n";
  for (const SweepGrid& g : grids) {
    const std::string p = Prefix(g.key);
    const CostModel& model = models[g.key.dtype];
    fmt::format_to(std::back_inserter(html), "<h2>{}</h2>\n", XmlEscape(Subtitle(g.key)));
    files.push_back({p + "_best.svg", BestMap(g, model)});
    Figure(html, files.back().name, "fastest strategy per cell");
    html += "<h3>Time per strategy</h3>\n";
    for (ArStrategy s : kArStrategies) {
      if (!AnyMeasured(g, s)) continue;
      files.push_back({fmt::format("{}_time_{}.svg", p, ArStrategyName(s)), TimeMap(g, s)});
      Figure(html, files.back().name, fmt::format("{} time (µs)", ArStrategyLabel(s)));
    }
    html += "<h3>% slower than the fastest</h3>\n";
    for (ArStrategy s : kArStrategies) {
      if (!AnyMeasured(g, s)) continue;
      files.push_back({fmt::format("{}_slower_{}.svg", p, ArStrategyName(s)), SlowerMap(g, s)});
      Figure(html, files.back().name,
             fmt::format("{} % slower than the fastest", ArStrategyLabel(s)));
    }
    AddRatioMaps(g, p, files, html);
  }
  for (const SizeSweep& s : sweeps) {
    const std::string p =
        fmt::format("w{}_{}_{}_size", s.key.world_size, s.key.dtype, ArModeName(s.key.mode));
    fmt::format_to(std::back_inserter(html), "<h2>Size sweep: {}</h2>\n",
                   XmlEscape(Subtitle(s.key)));
    files.push_back({p + "_time.svg", SizeChart(s, false)});
    Figure(html, files.back().name, "time vs message size");
    files.push_back({p + "_busbw.svg", SizeChart(s, true)});
    Figure(html, files.back().name, "bus bandwidth vs message size");
  }
  html += "</body></html>\n";
  files.push_back({"index.html", std::move(html)});
  return files;
}

}  // namespace sightline
