// Order statistics over durations, defined once so every analysis reports the same median and
// percentiles (docs/metrics.md: "Statistics").
#pragma once

#include <cstdint>
#include <vector>

namespace sightline {

struct DurationStats {
  int64_t count = 0;
  int64_t total = 0;
  double mean = 0;
  double median = 0;  // mean of the two middle values for an even count, as nsys stats does
  int64_t min = 0;
  int64_t max = 0;
  double stddev = 0;  // sample standard deviation (n-1), 0 for a single value, as nsys stats does
  double p90 = 0;
  double p99 = 0;
};

// Sorts `values` in place. Percentiles interpolate linearly between closest ranks.
DurationStats ComputeDurationStats(std::vector<int64_t>& values);

// The median as defined once (docs/metrics.md, "Statistics"): the middle value; for an even count
// the mean of the two middle values; 0 for none. O(n) (selection, not a sort).
double Median(std::vector<double> values);
double Median(std::vector<int64_t> values);

// Percentile p in [0,100] of sorted values, linear interpolation between closest ranks.
double PercentileOfSorted(const std::vector<int64_t>& sorted, double p);
double PercentileOfSorted(const std::vector<double>& sorted, double p);

}  // namespace sightline

namespace sightline {

// The p-quantile (0 < p < 1) of Student's t distribution with `df` > 0 degrees of freedom (df may
// be fractional, as Welch's approximation gives); NaN for arguments outside those ranges. Exact to
// about 1e-10 (the regularized incomplete beta function by its continued fraction, then bisection).
double StudentTQuantile(double p, double df);

// Half the `confidence` interval of mean(after) - mean(before) that the spread between runs gives,
// each value one run's figure (docs/metrics.md, "Diff verdict", "Between runs"): Welch's t when
// both sides have two runs or more; with one run on a side, that run is taken to spread as the
// other side's runs do (Student's t with that side's runs - 1 degrees of freedom); NaN with one
// run on each side (nothing to estimate it from) or a non-finite value; 0 when no run differs.
double BetweenRunsHalfWidth(const std::vector<double>& before, const std::vector<double>& after,
                            double confidence);

}  // namespace sightline
