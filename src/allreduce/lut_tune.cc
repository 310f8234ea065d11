#include "allreduce/lut_tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "base/strings.h"

namespace sightline {

ArStrategy LutTable::Select(int64_t hidden_size, int64_t num_tokens) const {
  const int h = NearestLog2Index(hidden, hidden_size);
  const int t = NearestLog2Index(tokens, num_tokens);
  if (h < 0 || t < 0) return ArStrategy::kNccl;
  return cells[static_cast<size_t>(h) * tokens.size() + static_cast<size_t>(t)];
}

namespace {

int64_t CellBytes(const SweepGrid& g, size_t h, size_t t) {
  return g.hidden[h] * g.tokens[t] * ArDtypeBytes(g.key.dtype);
}

// `model` (may be null) chooses at grid points with no measurement.
LutTable TableFrom(const SweepGrid& g, const std::vector<size_t>& hs, const std::vector<size_t>& ts,
                   const CostModel* model) {
  LutTable table;
  table.world_size = g.key.world_size;
  table.fusion = g.key.fusion;
  for (size_t h : hs) table.hidden.push_back(g.hidden[h]);
  for (size_t t : ts) table.tokens.push_back(g.tokens[t]);
  for (size_t h : hs) {
    for (size_t t : ts) {
      const std::optional<ArStrategy> best = g.Best(h, t);
      std::optional<ArStrategy> modelled;
      if (!best && model != nullptr) {
        modelled = model->Choose(g.key.world_size, g.key.fusion, g.key.mode, CellBytes(g, h, t));
      }
      table.cells.push_back(best.value_or(modelled.value_or(ArStrategy::kNccl)));
      table.measured.push_back(best.has_value());
      table.by_model.push_back(modelled.has_value());
    }
  }
  return table;
}

std::vector<size_t> AllIndices(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// Every other index and the last one; all of them when there are fewer than 3.
std::vector<size_t> CoarseIndices(size_t n) {
  if (n < 3) return AllIndices(n);
  std::vector<size_t> v;
  for (size_t i = 0; i < n; i += 2) v.push_back(i);
  if (v.back() != n - 1) v.push_back(n - 1);
  return v;
}

using Chooser = std::function<std::optional<ArStrategy>(size_t, size_t)>;

// Accumulates losses in % of the best time; Finish() computes the mean.
class LossAccumulator {
 public:
  void Add(double loss_pct, int64_t hidden, int64_t tokens, int64_t bytes) {
    ++s_.cells;
    sum_ += loss_pct;
    if (s_.cells == 1 || loss_pct > s_.worst_pct) {
      s_.worst_pct = loss_pct;
      s_.worst_hidden = hidden;
      s_.worst_tokens = tokens;
      s_.worst_bytes = bytes;
    }
  }
  LossStats& stats() { return s_; }
  LossStats Finish() {
    s_.mean_pct = s_.cells > 0 ? sum_ / s_.cells : 0;
    return s_;
  }

 private:
  LossStats s_;
  double sum_ = 0;
};

// Loss of `choose` against the best measured strategy, over the cells `include` accepts.
LossStats Evaluate(const SweepGrid& g, const Chooser& choose,
                   const std::function<bool(size_t, size_t)>& include) {
  LossAccumulator acc;
  for (size_t h = 0; h < g.hidden.size(); ++h) {
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      if (!include(h, t)) continue;
      const std::optional<ArStrategy> best = g.Best(h, t);
      if (!best) continue;
      const std::optional<ArStrategy> choice = choose(h, t);
      if (!choice) {
        ++acc.stats().no_choice;
        continue;
      }
      const double chosen = g.Time(*choice, h, t);
      if (std::isnan(chosen)) {
        ++acc.stats().unmeasured_choice;
        continue;
      }
      acc.Add((chosen / g.Time(*best, h, t) - 1.0) * 100.0, g.hidden[h], g.tokens[t],
              CellBytes(g, h, t));
    }
  }
  return acc.Finish();
}

StrategyMask MeasuredIn(const SweepGrid& g, size_t h, size_t t) {
  StrategyMask m{};
  for (ArStrategy s : kArStrategies) m[static_cast<int>(s)] = !std::isnan(g.Time(s, h, t));
  return m;
}

// The model's choice in a cell, among the strategies measured there (so that its loss is a
// measured one).
Chooser ModelChooser(const SweepGrid& g, const CostModel& model) {
  return [&g, &model](size_t h, size_t t) {
    return model.Choose(g.key.world_size, g.key.fusion, g.key.mode, CellBytes(g, h, t),
                        MeasuredIn(g, h, t));
  };
}

// The model fitted on the cells `include` accepts of one grid.
CostModel FitGrid(const SweepGrid& g, const std::function<bool(size_t, size_t)>& include) {
  CostModel model;
  for (ArStrategy s : kArStrategies) {
    std::vector<CostPoint> points;
    for (size_t h = 0; h < g.hidden.size(); ++h) {
      for (size_t t = 0; t < g.tokens.size(); ++t) {
        const double v = g.Time(s, h, t);
        if (include(h, t) && !std::isnan(v)) points.push_back({CellBytes(g, h, t), v});
      }
    }
    if (std::optional<LinearFit> fit = FitLatencyBandwidth(points)) {
      model.Add(CostModelKey{g.key.world_size, g.key.fusion, g.key.mode, s}, *fit);
    }
  }
  return model;
}

LutCheck Check(const SweepGrid& g, const LutTable& table, double noise_pct,
               const CostModel& model) {
  LutCheck c;
  auto all = [](size_t, size_t) { return true; };
  // A cell is incomplete when it lacks a strategy that this grid measured somewhere (a sweep
  // without Lamport rows does not make every cell incomplete).
  std::array<bool, kNumArStrategies> in_grid{};
  for (ArStrategy s : kArStrategies) {
    const std::vector<double>& v = g.time_us[static_cast<int>(s)];
    in_grid[static_cast<int>(s)] =
        std::any_of(v.begin(), v.end(), [](double x) { return !std::isnan(x); });
  }
  for (size_t h = 0; h < g.hidden.size(); ++h) {
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const std::optional<ArStrategy> best = g.Best(h, t);
      if (!best) {
        ++c.cells_unmeasured;
        continue;
      }
      ++c.cells_measured;
      ++c.chosen[static_cast<int>(*best)];
      bool complete = true;
      for (ArStrategy s : kArStrategies) {
        complete &= !in_grid[static_cast<int>(s)] || !std::isnan(g.Time(s, h, t));
      }
      if (!complete) ++c.cells_incomplete;
      const double second = g.RunnerUpTime(h, t);
      if (!std::isnan(second) && second <= g.Time(*best, h, t) * (1.0 + noise_pct / 100.0)) {
        ++c.close_calls;
      }
    }
  }
  // Through the same lookup the header does, at the grid values themselves.
  c.table = Evaluate(
      g,
      [&](size_t h, size_t t) {
        return std::optional<ArStrategy>(table.Select(g.hidden[h], g.tokens[t]));
      },
      all);
  c.nccl_only = Evaluate(
      g, [](size_t, size_t) { return std::optional<ArStrategy>(ArStrategy::kNccl); }, all);
  for (bool b : table.by_model) c.cells_by_model += b ? 1 : 0;
  const Chooser model_choice = ModelChooser(g, model);
  c.model = Evaluate(g, model_choice, all);
  for (size_t h = 0; h < g.hidden.size(); ++h) {
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      const std::optional<ArStrategy> best = g.Best(h, t);
      const std::optional<ArStrategy> choice = model_choice(h, t);
      if (!best || !choice || *choice == *best) continue;
      ModelDisagreement d;
      d.hidden = g.hidden[h];
      d.tokens = g.tokens[t];
      d.bytes = CellBytes(g, h, t);
      d.measured = *best;
      d.model = *choice;
      d.measured_us = g.Time(*best, h, t);
      d.model_choice_us = g.Time(*choice, h, t);
      d.loss_pct = (d.model_choice_us / d.measured_us - 1.0) * 100.0;
      c.disagreements.push_back(d);
    }
  }

  const std::vector<size_t> hs = CoarseIndices(g.hidden.size());
  const std::vector<size_t> ts = CoarseIndices(g.tokens.size());
  c.coarse_possible = hs.size() < g.hidden.size() || ts.size() < g.tokens.size();
  if (c.coarse_possible) {
    const LutTable coarse = TableFrom(g, hs, ts, nullptr);
    const std::set<size_t> kept_h(hs.begin(), hs.end()), kept_t(ts.begin(), ts.end());
    auto kept = [&](size_t h, size_t t) { return kept_h.count(h) && kept_t.count(t); };
    auto held_out = [&](size_t h, size_t t) { return !kept(h, t); };
    c.coarse = Evaluate(
        g,
        [&](size_t h, size_t t) {
          return std::optional<ArStrategy>(coarse.Select(g.hidden[h], g.tokens[t]));
        },
        held_out);
    const CostModel coarse_model = FitGrid(g, kept);
    c.coarse_model = Evaluate(g, ModelChooser(g, coarse_model), held_out);
  }
  return c;
}

SizeCheck CheckSizes(const SizeSweep& s, const CostModel& model) {
  SizeCheck c;
  c.key = s.key;
  c.sizes = s.sizes;
  LossAccumulator acc;
  for (size_t i = 0; i < s.sizes.size(); ++i) {
    std::optional<ArStrategy> best;
    StrategyMask measured{};
    for (ArStrategy st : kArStrategies) {
      const double v = s.time_us[static_cast<int>(st)][i];
      if (std::isnan(v)) continue;
      measured[static_cast<int>(st)] = true;
      if (!best || v < s.time_us[static_cast<int>(*best)][i]) best = st;
    }
    if (!best) continue;
    ++c.chosen[static_cast<int>(*best)];
    const std::optional<ArStrategy> choice =
        model.Choose(s.key.world_size, s.key.fusion, s.key.mode, s.sizes[i], measured);
    if (!choice) {
      ++acc.stats().no_choice;
      continue;
    }
    const double best_us = s.time_us[static_cast<int>(*best)][i];
    const double choice_us = s.time_us[static_cast<int>(*choice)][i];
    const double loss = (choice_us / best_us - 1.0) * 100.0;
    acc.Add(loss, 0, 0, s.sizes[i]);
    if (*choice != *best) {
      c.disagreements.push_back(
          ModelDisagreement{0, 0, s.sizes[i], *best, *choice, best_us, choice_us, loss});
    }
  }
  c.model = acc.Finish();
  return c;
}

std::string AvailableGridKinds(const std::vector<SweepGrid>& grids) {
  std::set<std::string> kinds;
  for (const SweepGrid& g : grids) {
    kinds.insert(fmt::format("{} {}", g.key.dtype, ArModeName(g.key.mode)));
  }
  std::string out;
  for (const std::string& k : kinds) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string Range(const std::vector<int64_t>& v) {
  return v.size() == 1 ? fmt::format("{}", v.front())
                       : fmt::format("{}..{} ({})", v.front(), v.back(), v.size());
}

std::string Loss(const LossStats& s) {
  if (s.cells == 0) return "n/a";
  return fmt::format("{:.1f}% / {:.1f}%", s.worst_pct, s.mean_pct);
}

}  // namespace

StatusOr<TuneResult> TuneAllReduce(const std::vector<SweepRow>& rows, const TuneOptions& options) {
  const std::vector<SweepGrid> grids = BuildSweepGrids(rows);
  const std::vector<SizeSweep> sweeps = BuildSizeSweeps(rows);
  const CostModel model = CostModel::Fit(rows, options.dtype);
  TuneResult result;
  result.mode = options.mode;
  result.dtype = options.dtype;
  result.noise_pct = options.noise_pct;
  result.grid_kinds = AvailableGridKinds(grids);
  for (const auto& [key, fit] : model.fits()) {
    if (key.mode == options.mode) result.fits.push_back({key, fit});
  }
  for (const SweepGrid& g : grids) {
    if (g.key.mode != options.mode || g.key.dtype != options.dtype) continue;
    LutTable table = TableFrom(g, AllIndices(g.hidden.size()), AllIndices(g.tokens.size()), &model);
    result.checks.push_back(Check(g, table, options.noise_pct, model));
    result.tables.push_back(std::move(table));
  }
  for (const SizeSweep& s : sweeps) {
    if (s.key.mode != options.mode || s.key.dtype != options.dtype) continue;
    result.size_checks.push_back(CheckSizes(s, model));
  }
  if (result.tables.empty() && result.size_checks.empty()) {
    if (grids.empty() && sweeps.empty()) {
      return InvalidInputError("the sweep has a header but no rows: nothing to tune");
    }
    std::set<std::string> kinds;
    for (const SweepRow& r : rows) kinds.insert(fmt::format("{} {}", r.dtype, ArModeName(r.mode)));
    std::string held;
    for (const std::string& k : kinds) held += (held.empty() ? "" : ", ") + k;
    return InvalidInputError(
        fmt::format("no sweep rows for {} in {} mode; the sweep holds: {}; pick them with --dtype "
                    "and --mode",
                    options.dtype, ArModeName(options.mode), held));
  }
  return result;
}

Status CheckHasTables(const TuneResult& r) {
  if (!r.tables.empty()) return Status::Ok();
  if (r.grid_kinds.empty()) {
    return InvalidInputError(
        "no 2-D sweep rows (num_tokens and hidden_size > 0): the lookup table is tuned over "
        "hidden size x tokens; run the bench's 2-D sweep (without -o, tune prints the cost model "
        "of the size sweep)");
  }
  return InvalidInputError(fmt::format(
      "no 2-D sweep rows for {} in {} mode; the 2-D rows hold: {}; pick them with --dtype and "
      "--mode",
      r.dtype, ArModeName(r.mode), r.grid_kinds));
}

namespace {

std::string Chosen(const std::array<int, kNumArStrategies>& c) {
  return fmt::format("{}/{}/{}/{}", c[0], c[1], c[2], c[3]);
}

std::string Bytes(int64_t b) {
  if (b >= (int64_t{1} << 20) && b % (int64_t{1} << 20) == 0) return fmt::format("{}M", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{}K", b >> 10);
  return fmt::format("{}", b);
}

constexpr size_t kMaxListed = 8;  // disagreements listed per table; the rest are counted

void ListDisagreements(std::string& out, const std::string& where,
                       const std::vector<ModelDisagreement>& ds) {
  if (ds.empty()) return;
  Emit(out, "  {}: {} point(s) where the model's choice is not the measured winner:\n", where,
       ds.size());
  std::vector<ModelDisagreement> sorted = ds;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.loss_pct > b.loss_pct; });
  for (size_t i = 0; i < sorted.size() && i < kMaxListed; ++i) {
    const ModelDisagreement& d = sorted[i];
    const std::string cell = d.tokens > 0 ? fmt::format("hidden {} x {} tokens", d.hidden, d.tokens)
                                          : fmt::format("{} bytes", Bytes(d.bytes));
    Emit(out, "    {:<28} measured {} {:.2f} us, model {} {:.2f} us (+{:.1f}%)\n", cell,
         ArStrategyLabel(d.measured), d.measured_us, ArStrategyLabel(d.model), d.model_choice_us,
         d.loss_pct);
  }
  if (sorted.size() > kMaxListed) Emit(out, "    ... and {} more\n", sorted.size() - kMaxListed);
}

}  // namespace

std::string RenderTuneSummary(const TuneResult& r) {
  std::string out = fmt::format("All-reduce lookup tables: {}, {} mode, {} table(s)\n\n", r.dtype,
                                ArModeName(r.mode), r.tables.size());
  const std::string close_head = fmt::format("close <{:g}%", r.noise_pct);
  // The fusion column fits the longest fusion name shown (16 without the quantizing fusions).
  size_t fusion_width = 16;
  for (const LutTable& t : r.tables) {
    fusion_width = std::max(fusion_width, ArFusionName(t.fusion).size());
  }
  for (const ModelFitRow& f : r.fits) {
    fusion_width = std::max(fusion_width, ArFusionName(f.key.fusion).size());
  }
  const std::string fusion_col = fmt::format("{{:<{}}}", fusion_width);
  const std::string kRow =
      "{:>5}  " + fusion_col + "  {:<28}  {:>5}  {:>16}  {:>15}  {:>11}  {:>15}  {:>17}\n";
  if (!r.tables.empty()) {
    Emit(out, fmt::runtime(kRow), "world", "fusion", "hidden x tokens", "cells", "NCCL/1sh/2sh/Lmp",
         "table worst/mean", close_head, "coarse worst/mean", "NCCL-only worst/mean");
  }
  for (size_t i = 0; i < r.tables.size(); ++i) {
    const LutTable& t = r.tables[i];
    const LutCheck& c = r.checks[i];
    Emit(out, fmt::runtime(kRow), t.world_size, ArFusionName(t.fusion),
         Range(t.hidden) + " x " + Range(t.tokens), c.cells_measured, Chosen(c.chosen),
         Loss(c.table), c.close_calls, c.coarse_possible ? Loss(c.coarse) : "n/a",
         Loss(c.nccl_only));
  }
  if (!r.tables.empty()) {
    out +=
        "\n  table: the header's choice against the fastest strategy measured in each cell (the\n"
        "    table holds every measured cell's best, so this is 0 unless the lookup is wrong).\n"
        "  close: cells whose runner-up is within the noise margin of the best; a re-run may "
        "flip\n"
        "    them, at a cost of at most that margin.\n"
        "  coarse: the table rebuilt from every other grid value per axis and evaluated on the "
        "cells\n"
        "    left out; what nearest-cell lookup loses at sizes between measured ones.\n"
        "  NCCL-only: what always using NCCL would lose; the table's gain.\n";
  }
  for (size_t i = 0; i < r.tables.size(); ++i) {
    const LutTable& t = r.tables[i];
    const LutCheck& c = r.checks[i];
    const std::string where =
        fmt::format("world size {}, fusion {}", t.world_size, ArFusionName(t.fusion));
    if (c.table.cells > 0 && c.table.worst_pct > 0) {
      Emit(out, "  {}: worst table loss at hidden {}, {} tokens\n", where, c.table.worst_hidden,
           c.table.worst_tokens);
    }
    if (c.coarse_possible && c.coarse.cells > 0) {
      Emit(out, "  {}: coarse check over {} held-out cells, worst at hidden {}, {} tokens\n", where,
           c.coarse.cells, c.coarse.worst_hidden, c.coarse.worst_tokens);
    }
    if (c.cells_unmeasured > 0) {
      Emit(out,
           "  warning: {}: {} grid cells have no measurement; the cost model chose {} of them, "
           "NCCL the rest\n",
           where, c.cells_unmeasured, c.cells_by_model);
    }
    if (c.cells_incomplete > 0) {
      Emit(out, "  warning: {}: {} cells lack a strategy; their best is among those measured\n",
           where, c.cells_incomplete);
    }
  }

  // The cost model.
  Emit(out, "\nCost model t = a + b * bytes ({}, {} mode; fitted in relative error):\n", r.dtype,
       ArModeName(r.mode));
  if (r.fits.empty()) out += "  no fit (a fit needs two sizes of one strategy)\n";
  const std::string kFit =
      "{:>5}  " + fusion_col + "  {:<8}  {:>6}  {:>11}  {:>8}  {:>10}  {:>15}\n";
  if (!r.fits.empty()) {
    Emit(out, fmt::runtime(kFit), "world", "fusion", "strategy", "points", "bytes", "a (us)",
         "1/b (GB/s)", "err max/mean");
  }
  for (const ModelFitRow& f : r.fits) {
    const double bw = f.fit.BandwidthGbps();
    Emit(out, fmt::runtime(kFit), f.key.world_size, ArFusionName(f.key.fusion),
         ArStrategyName(f.key.strategy), f.fit.points,
         Bytes(f.fit.min_bytes) + ".." + Bytes(f.fit.max_bytes), fmt::format("{:.2f}", f.fit.a_us),
         std::isinf(bw) ? "inf" : fmt::format("{:.1f}", bw),
         fmt::format("{:.1f}% / {:.1f}%", f.fit.max_err_pct, f.fit.mean_err_pct) +
             (f.fit.clamped ? "*" : ""));
  }
  if (std::any_of(r.fits.begin(), r.fits.end(), [](const auto& f) { return f.fit.clamped; })) {
    out += "  *: the unconstrained fit had a negative term, set to 0\n";
  }
  if (!r.tables.empty()) {
    const std::string kModelRow =
        "{:>5}  " + fusion_col + "  {:>5}  {:>16}  {:>16}  {:>8}  {:>20}  {:>20}\n";
    const std::string kModel = "\n" + kModelRow;
    Emit(out, fmt::runtime(kModel), "world", "fusion", "cells", "table worst/mean",
         "model worst/mean", "disagree", "held-out table w/m", "held-out model w/m");
    for (size_t i = 0; i < r.tables.size(); ++i) {
      const LutTable& t = r.tables[i];
      const LutCheck& c = r.checks[i];
      Emit(out, fmt::runtime(kModelRow), t.world_size, ArFusionName(t.fusion), c.cells_measured,
           Loss(c.table), Loss(c.model), c.disagreements.size(),
           c.coarse_possible ? Loss(c.coarse) : "n/a",
           c.coarse_possible ? Loss(c.coarse_model) : "n/a");
    }
    out +=
        "\n  model: the strategy with the smallest predicted time among those measured in the "
        "cell,\n"
        "    against the measured best; disagree: cells where that is not the measured winner.\n"
        "  held-out: table and model each built from the coarse cells only, on the cells left "
        "out.\n";
  }
  for (const SizeCheck& s : r.size_checks) {
    Emit(out,
         "\nsize sweep, world size {}, fusion {}: {} sizes {}..{}, fastest NCCL/1sh/2sh/Lmp {}; "
         "model worst/mean {}, {} disagree\n",
         s.key.world_size, ArFusionName(s.key.fusion), s.sizes.size(), Bytes(s.sizes.front()),
         Bytes(s.sizes.back()), Chosen(s.chosen), Loss(s.model), s.disagreements.size());
  }
  for (size_t i = 0; i < r.tables.size(); ++i) {
    ListDisagreements(out,
                      fmt::format("world size {}, fusion {}", r.tables[i].world_size,
                                  ArFusionName(r.tables[i].fusion)),
                      r.checks[i].disagreements);
  }
  for (const SizeCheck& s : r.size_checks) {
    ListDisagreements(out,
                      fmt::format("size sweep, world size {}, fusion {}", s.key.world_size,
                                  ArFusionName(s.key.fusion)),
                      s.disagreements);
  }
  return out;
}

}  // namespace sightline
