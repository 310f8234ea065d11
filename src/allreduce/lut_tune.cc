#include "allreduce/lut_tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace sightline {

ArStrategy LutTable::Select(int64_t hidden_size, int64_t num_tokens) const {
  const int h = NearestLog2Index(hidden, hidden_size);
  const int t = NearestLog2Index(tokens, num_tokens);
  if (h < 0 || t < 0) return ArStrategy::kNccl;
  return cells[static_cast<size_t>(h) * tokens.size() + static_cast<size_t>(t)];
}

namespace {

LutTable TableFrom(const SweepGrid& g, const std::vector<size_t>& hs,
                   const std::vector<size_t>& ts) {
  LutTable table;
  table.world_size = g.key.world_size;
  table.fusion = g.key.fusion;
  for (size_t h : hs) table.hidden.push_back(g.hidden[h]);
  for (size_t t : ts) table.tokens.push_back(g.tokens[t]);
  for (size_t h : hs) {
    for (size_t t : ts) {
      const std::optional<ArStrategy> best = g.Best(h, t);
      table.cells.push_back(best.value_or(ArStrategy::kNccl));
      table.measured.push_back(best.has_value());
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

// Loss of `choose` against the best measured strategy, over the cells `include` accepts.
LossStats Evaluate(const SweepGrid& g, const std::function<ArStrategy(size_t, size_t)>& choose,
                   const std::function<bool(size_t, size_t)>& include) {
  LossStats s;
  double sum = 0;
  for (size_t h = 0; h < g.hidden.size(); ++h) {
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      if (!include(h, t)) continue;
      const std::optional<ArStrategy> best = g.Best(h, t);
      if (!best) continue;
      const double chosen = g.Time(choose(h, t), h, t);
      if (std::isnan(chosen)) {
        ++s.unmeasured_choice;
        continue;
      }
      const double loss = (chosen / g.Time(*best, h, t) - 1.0) * 100.0;
      ++s.cells;
      sum += loss;
      if (s.cells == 1 || loss > s.worst_pct) {
        s.worst_pct = loss;
        s.worst_hidden = g.hidden[h];
        s.worst_tokens = g.tokens[t];
      }
    }
  }
  s.mean_pct = s.cells > 0 ? sum / s.cells : 0;
  return s;
}

LutCheck Check(const SweepGrid& g, const LutTable& table, double noise_pct) {
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
      g, [&](size_t h, size_t t) { return table.Select(g.hidden[h], g.tokens[t]); }, all);
  c.nccl_only = Evaluate(
      g, [](size_t, size_t) { return ArStrategy::kNccl; }, all);

  const std::vector<size_t> hs = CoarseIndices(g.hidden.size());
  const std::vector<size_t> ts = CoarseIndices(g.tokens.size());
  c.coarse_possible = hs.size() < g.hidden.size() || ts.size() < g.tokens.size();
  if (c.coarse_possible) {
    const LutTable coarse = TableFrom(g, hs, ts);
    const std::set<size_t> kept_h(hs.begin(), hs.end()), kept_t(ts.begin(), ts.end());
    c.coarse = Evaluate(
        g, [&](size_t h, size_t t) { return coarse.Select(g.hidden[h], g.tokens[t]); },
        [&](size_t h, size_t t) { return !kept_h.count(h) || !kept_t.count(t); });
  }
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
  if (grids.empty()) {
    return InvalidInputError(
        "no 2-D sweep rows (num_tokens and hidden_size > 0): the lookup table is tuned over "
        "hidden size x tokens; run the bench's 2-D sweep");
  }
  TuneResult result;
  result.mode = options.mode;
  result.dtype = options.dtype;
  result.noise_pct = options.noise_pct;
  for (const SweepGrid& g : grids) {
    if (g.key.mode != options.mode || g.key.dtype != options.dtype) continue;
    LutTable table = TableFrom(g, AllIndices(g.hidden.size()), AllIndices(g.tokens.size()));
    result.checks.push_back(Check(g, table, options.noise_pct));
    result.tables.push_back(std::move(table));
  }
  if (result.tables.empty()) {
    return InvalidInputError(fmt::format(
        "no 2-D sweep rows for {} in {} mode; the sweep holds: {}; pick them with --dtype and "
        "--mode",
        options.dtype, ArModeName(options.mode), AvailableGridKinds(grids)));
  }
  return result;
}

std::string RenderTuneSummary(const TuneResult& r) {
  std::string out = fmt::format("All-reduce lookup tables: {}, {} mode, {} table(s)\n\n", r.dtype,
                                ArModeName(r.mode), r.tables.size());
  const std::string close_head = fmt::format("close <{:g}%", r.noise_pct);
  fmt::format_to(std::back_inserter(out),
                 "{:>5}  {:<16}  {:<28}  {:>5}  {:>16}  {:>15}  {:>11}  {:>15}  {:>17}\n", "world",
                 "fusion", "hidden x tokens", "cells", "NCCL/1sh/2sh/Lmp", "table worst/mean",
                 close_head, "coarse worst/mean", "NCCL-only worst/mean");
  for (size_t i = 0; i < r.tables.size(); ++i) {
    const LutTable& t = r.tables[i];
    const LutCheck& c = r.checks[i];
    fmt::format_to(std::back_inserter(out),
                   "{:>5}  {:<16}  {:<28}  {:>5}  {:>16}  {:>15}  {:>11}  {:>15}  {:>17}\n",
                   t.world_size, ArFusionName(t.fusion), Range(t.hidden) + " x " + Range(t.tokens),
                   c.cells_measured,
                   fmt::format("{}/{}/{}/{}", c.chosen[0], c.chosen[1], c.chosen[2], c.chosen[3]),
                   Loss(c.table), c.close_calls, c.coarse_possible ? Loss(c.coarse) : "n/a",
                   Loss(c.nccl_only));
  }
  out +=
      "\n  table: the header's choice against the fastest strategy measured in each cell (the\n"
      "    table holds every measured cell's best, so this is 0 unless the lookup is wrong).\n"
      "  close: cells whose runner-up is within the noise margin of the best; a re-run may flip\n"
      "    them, at a cost of at most that margin.\n"
      "  coarse: the table rebuilt from every other grid value per axis and evaluated on the "
      "cells\n"
      "    left out; what nearest-cell lookup loses at sizes between measured ones.\n"
      "  NCCL-only: what always using NCCL would lose; the table's gain.\n";
  for (size_t i = 0; i < r.tables.size(); ++i) {
    const LutTable& t = r.tables[i];
    const LutCheck& c = r.checks[i];
    const std::string where =
        fmt::format("world size {}, fusion {}", t.world_size, ArFusionName(t.fusion));
    if (c.table.cells > 0 && c.table.worst_pct > 0) {
      fmt::format_to(std::back_inserter(out), "  {}: worst table loss at hidden {}, {} tokens\n",
                     where, c.table.worst_hidden, c.table.worst_tokens);
    }
    if (c.coarse_possible && c.coarse.cells > 0) {
      fmt::format_to(std::back_inserter(out),
                     "  {}: coarse check over {} held-out cells, worst at hidden {}, {} tokens\n",
                     where, c.coarse.cells, c.coarse.worst_hidden, c.coarse.worst_tokens);
    }
    if (c.cells_unmeasured > 0) {
      fmt::format_to(
          std::back_inserter(out),
          "  warning: {}: {} grid cells have no measurement; the table says NCCL there\n", where,
          c.cells_unmeasured);
    }
    if (c.cells_incomplete > 0) {
      fmt::format_to(
          std::back_inserter(out),
          "  warning: {}: {} cells lack a strategy; their best is among those measured\n", where,
          c.cells_incomplete);
    }
  }
  return out;
}

}  // namespace sightline
