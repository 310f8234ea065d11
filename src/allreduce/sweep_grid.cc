#include "allreduce/sweep_grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace sightline {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

auto Tie(const SweepKey& k) { return std::tie(k.world_size, k.dtype, k.fusion, k.mode); }

SweepKey KeyOf(const SweepRow& r) { return SweepKey{r.world_size, r.dtype, r.fusion, r.mode}; }

std::vector<int64_t> SortedUnique(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

size_t IndexOf(const std::vector<int64_t>& sorted, int64_t x) {
  return static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
}

}  // namespace

bool SweepKey::operator<(const SweepKey& o) const { return Tie(*this) < Tie(o); }
bool SweepKey::operator==(const SweepKey& o) const { return Tie(*this) == Tie(o); }

std::string SweepKey::Describe() const {
  return fmt::format("world size {}, {}, fusion {}, {}", world_size, dtype, ArFusionName(fusion),
                     ArModeName(mode));
}

std::optional<ArStrategy> SweepGrid::Best(size_t h, size_t t) const {
  std::optional<ArStrategy> best;
  double best_time = 0;
  for (ArStrategy s : kArStrategies) {
    const double v = Time(s, h, t);
    if (std::isnan(v)) continue;
    if (!best || v < best_time) {
      best = s;
      best_time = v;
    }
  }
  return best;
}

double SweepGrid::RunnerUpTime(size_t h, size_t t) const {
  double first = kNaN, second = kNaN;
  for (ArStrategy s : kArStrategies) {
    const double v = Time(s, h, t);
    if (std::isnan(v)) continue;
    if (std::isnan(first) || v < first) {
      second = first;
      first = v;
    } else if (std::isnan(second) || v < second) {
      second = v;
    }
  }
  return second;
}

std::vector<SweepGrid> BuildSweepGrids(const std::vector<SweepRow>& rows) {
  std::map<SweepKey, std::vector<const SweepRow*>> groups;
  for (const SweepRow& r : rows) {
    if (r.is_grid()) groups[KeyOf(r)].push_back(&r);
  }
  std::vector<SweepGrid> grids;
  for (const auto& [key, members] : groups) {
    SweepGrid g;
    g.key = key;
    std::vector<int64_t> h, t;
    for (const SweepRow* r : members) {
      h.push_back(r->hidden_size);
      t.push_back(r->num_tokens);
    }
    g.hidden = SortedUnique(std::move(h));
    g.tokens = SortedUnique(std::move(t));
    for (auto& v : g.time_us) v.assign(g.hidden.size() * g.tokens.size(), kNaN);
    for (const SweepRow* r : members) {
      const size_t cell =
          IndexOf(g.hidden, r->hidden_size) * g.tokens.size() + IndexOf(g.tokens, r->num_tokens);
      g.time_us[static_cast<int>(r->strategy)][cell] = r->time_us;
    }
    grids.push_back(std::move(g));
  }
  return grids;
}

std::vector<SizeSweep> BuildSizeSweeps(const std::vector<SweepRow>& rows) {
  std::map<SweepKey, std::vector<const SweepRow*>> groups;
  for (const SweepRow& r : rows) {
    if (!r.is_grid()) groups[KeyOf(r)].push_back(&r);
  }
  std::vector<SizeSweep> sweeps;
  for (const auto& [key, members] : groups) {
    SizeSweep s;
    s.key = key;
    std::vector<int64_t> sizes;
    for (const SweepRow* r : members) sizes.push_back(r->size_bytes);
    s.sizes = SortedUnique(std::move(sizes));
    for (auto& v : s.time_us) v.assign(s.sizes.size(), kNaN);
    for (auto& v : s.busbw_gbps) v.assign(s.sizes.size(), kNaN);
    for (const SweepRow* r : members) {
      const size_t i = IndexOf(s.sizes, r->size_bytes);
      s.time_us[static_cast<int>(r->strategy)][i] = r->time_us;
      s.busbw_gbps[static_cast<int>(r->strategy)][i] = r->busbw_gbps;
    }
    sweeps.push_back(std::move(s));
  }
  return sweeps;
}

int NearestLog2Index(const std::vector<int64_t>& grid, int64_t x) {
  if (grid.empty() || x < grid.front() || x > grid.back()) return -1;
  const size_t hi = IndexOf(grid, x);  // grid[hi] >= x
  if (grid[hi] == x || hi == 0) return static_cast<int>(hi);
  const size_t lo = hi - 1;
  // x <= grid.back() <= 2^31 (the reader caps a cell at 2^31 - 1 elements), so the products fit.
  const int64_t xx = x * x;
  const int64_t ab = grid[lo] * grid[hi];
  return static_cast<int>(xx <= ab ? lo : hi);
}

}  // namespace sightline
