// A latency-bandwidth cost model beside the tuned table: t = a + b * bytes, fitted per (world
// size, fusion, mode, strategy) to the sweep rows of one dtype. `tune` uses it to choose where the
// sweep has no cell and to flag cells where the measured winner and the model disagree.
// docs/allreduce.md#cost-model defines the fit and the figures.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "importers/allreduce_sweep/sweep_csv.h"

namespace sightline {

struct CostPoint {
  int64_t bytes = 0;
  double time_us = 0;
};

// t(bytes) = a_us + b_us_per_byte * bytes, valid on [min_bytes, max_bytes] (the sizes fitted).
struct LinearFit {
  double a_us = 0;
  double b_us_per_byte = 0;
  int points = 0;
  int64_t min_bytes = 0, max_bytes = 0;
  double max_err_pct = 0;   // worst |predicted - measured| / measured over the points, in %
  double mean_err_pct = 0;  // mean of the same
  bool clamped = false;     // the unconstrained fit had a < 0 or b < 0; that term was set to 0

  double Predict(int64_t bytes) const { return a_us + b_us_per_byte * static_cast<double>(bytes); }
  bool Covers(int64_t bytes) const { return bytes >= min_bytes && bytes <= max_bytes; }
  // 1 / b in GB/s (algorithm bandwidth at large sizes); infinite when b is 0.
  double BandwidthGbps() const;
};

// Least squares in relative error: minimises sum(((a + b x - t) / t)^2), so that a 1 KB point
// counts as much as a 256 MB one in a sweep spaced by powers of two. a and b are kept >= 0 (a
// negative term is set to 0 and the other refitted). nullopt with fewer than two distinct sizes.
std::optional<LinearFit> FitLatencyBandwidth(const std::vector<CostPoint>& points);

struct CostModelKey {
  int world_size = 0;
  ArFusion fusion = ArFusion::kNone;
  ArMode mode = ArMode::kGraph;
  ArStrategy strategy = ArStrategy::kNccl;

  bool operator<(const CostModelKey& o) const {
    return std::tie(world_size, fusion, mode, strategy) <
           std::tie(o.world_size, o.fusion, o.mode, o.strategy);
  }
};

using StrategyMask = std::array<bool, kNumArStrategies>;
inline constexpr StrategyMask kAllStrategies = {true, true, true, true};

class CostModel {
 public:
  // One fit per (world size, fusion, mode, strategy) over the rows of `dtype`, 1-D and 2-D rows
  // alike (the model sees only bytes).
  static CostModel Fit(const std::vector<SweepRow>& rows, const std::string& dtype);

  void Add(const CostModelKey& key, const LinearFit& fit) { fits_[key] = fit; }
  const std::map<CostModelKey, LinearFit>& fits() const { return fits_; }
  const LinearFit* Find(const CostModelKey& key) const;

  // The allowed strategy with the smallest predicted time at `bytes`, among those whose fit
  // covers `bytes` (no extrapolation: a kernel skipped above some size is never chosen there).
  // Ties go to the earlier strategy of kArStrategies. nullopt when no fit covers `bytes`.
  std::optional<ArStrategy> Choose(int world_size, ArFusion fusion, ArMode mode, int64_t bytes,
                                   const StrategyMask& allowed = kAllStrategies) const;

 private:
  std::map<CostModelKey, LinearFit> fits_;
};

}  // namespace sightline
