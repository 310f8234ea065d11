// The fit solves the 2 x 2 normal equations of weighted least squares (weights 1 / t^2) in MB,
// so that the sums stay well scaled from 1 KB to 256 MB.
#include "allreduce/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace sightline {

double LinearFit::BandwidthGbps() const {
  // b us per byte: 1 / b bytes per us = 1e-3 / b GB/s.
  return b_us_per_byte > 0 ? 1e-3 / b_us_per_byte : std::numeric_limits<double>::infinity();
}

std::optional<LinearFit> FitLatencyBandwidth(const std::vector<CostPoint>& points) {
  std::set<int64_t> sizes;
  for (const CostPoint& p : points) sizes.insert(p.bytes);
  if (sizes.size() < 2) return std::nullopt;

  constexpr double kMb = 1e6;  // x in MB inside the sums
  double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
  for (const CostPoint& p : points) {
    const double w = 1.0 / (p.time_us * p.time_us);
    const double x = static_cast<double>(p.bytes) / kMb;
    s0 += w;
    s1 += w * x;
    s2 += w * x * x;
    t0 += w * p.time_us;
    t1 += w * x * p.time_us;
  }
  LinearFit f;
  const double det = s0 * s2 - s1 * s1;
  double a = (t0 * s2 - t1 * s1) / det;
  double b = (s0 * t1 - s1 * t0) / det;  // us per MB
  if (b < 0) {
    f.clamped = true;
    b = 0;
    a = t0 / s0;  // argmin of sum(((a - t) / t)^2)
  } else if (a < 0) {
    f.clamped = true;
    a = 0;
    b = t1 / s2;  // argmin of sum(((b x - t) / t)^2)
  }
  f.a_us = a;
  f.b_us_per_byte = b / kMb;
  f.points = static_cast<int>(points.size());
  f.min_bytes = *sizes.begin();
  f.max_bytes = *sizes.rbegin();
  double sum = 0;
  for (const CostPoint& p : points) {
    const double err = std::abs(f.Predict(p.bytes) - p.time_us) / p.time_us * 100.0;
    f.max_err_pct = std::max(f.max_err_pct, err);
    sum += err;
  }
  f.mean_err_pct = sum / static_cast<double>(points.size());
  return f;
}

CostModel CostModel::Fit(const std::vector<SweepRow>& rows, const std::string& dtype) {
  std::map<CostModelKey, std::vector<CostPoint>> groups;
  for (const SweepRow& r : rows) {
    if (r.dtype != dtype) continue;
    groups[CostModelKey{r.world_size, r.fusion, r.mode, r.strategy}].push_back(
        CostPoint{r.size_bytes, r.time_us});
  }
  CostModel model;
  for (const auto& [key, points] : groups) {
    if (std::optional<LinearFit> fit = FitLatencyBandwidth(points)) model.Add(key, *fit);
  }
  return model;
}

const LinearFit* CostModel::Find(const CostModelKey& key) const {
  const auto it = fits_.find(key);
  return it == fits_.end() ? nullptr : &it->second;
}

std::optional<ArStrategy> CostModel::Choose(int world_size, ArFusion fusion, ArMode mode,
                                            int64_t bytes, const StrategyMask& allowed) const {
  std::optional<ArStrategy> best;
  double best_time = 0;
  for (ArStrategy s : kArStrategies) {
    if (!allowed[static_cast<int>(s)]) continue;
    const LinearFit* f = Find(CostModelKey{world_size, fusion, mode, s});
    if (f == nullptr || !f->Covers(bytes)) continue;
    const double t = f->Predict(bytes);
    if (!best || t < best_time) {
      best = s;
      best_time = t;
    }
  }
  return best;
}

}  // namespace sightline
