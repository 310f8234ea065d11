// Intervals for the change in serving percentiles between two runs (`sightline diff A B` of two
// serving results): requests of each run drawn with replacement (a request's ITL gaps go with it),
// with a fixed seed so the report is reproducible. Used by serving_diff. Units: percent.
// Definition: docs/metrics.md, "Serving" (interval of a percentile's change).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "analyses/serving/serving_metrics.h"

namespace sightline {

inline constexpr uint64_t kServingIntervalSeed = 0x5345525645ULL;

// The 95% interval of (after / before - 1) * 100 for one percentile; NaN when a side has no
// samples, or the percentile is 0 in more than half of the baseline's draws.
struct ChangeInterval {
  double lo = std::nan("");
  double hi = std::nan("");
};

// The intervals of the change in each percentile of `p` (0..100, np.percentile's linear rule) of
// one metric, over `draws` bootstrap draws of the requests of each side (one draw serves every
// percentile). Cost: O(draws x (requests + values)).
std::vector<ChangeInterval> PercentileChangeIntervals(
    const ServingSamples& before_run, const ServingSamples::Metric& before,
    const ServingSamples& after_run, const ServingSamples::Metric& after,
    const std::vector<double>& p, int draws = 1000, uint64_t seed = kServingIntervalSeed);

}  // namespace sightline
