#include "base/stats.h"

#include <algorithm>
#include <cmath>

#include "base/saturating.h"

namespace sightline {

namespace {

template <typename T>
double Percentile(const std::vector<T>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) + frac * static_cast<double>(sorted[hi] - sorted[lo]);
}

}  // namespace

double PercentileOfSorted(const std::vector<int64_t>& sorted, double p) {
  return Percentile(sorted, p);
}

double PercentileOfSorted(const std::vector<double>& sorted, double p) {
  return Percentile(sorted, p);
}

DurationStats ComputeDurationStats(std::vector<int64_t>& values) {
  DurationStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = static_cast<int64_t>(values.size());
  long double sum = 0;
  for (int64_t v : values) sum += v;
  s.total = SaturatingTotal(sum);
  s.mean = static_cast<double>(sum / s.count);
  const size_t n = values.size();
  s.median =
      n % 2 ? static_cast<double>(values[n / 2])
            : (static_cast<double>(values[n / 2 - 1]) + static_cast<double>(values[n / 2])) / 2;
  s.min = values.front();
  s.max = values.back();
  if (n > 1) {
    long double ss = 0;
    for (int64_t v : values) {
      const long double d = v - static_cast<long double>(s.mean);
      ss += d * d;
    }
    s.stddev = static_cast<double>(std::sqrt(ss / (n - 1)));
  }
  s.p90 = PercentileOfSorted(values, 90);
  s.p99 = PercentileOfSorted(values, 99);
  return s;
}

namespace {

template <typename T>
double MedianOf(std::vector<T>& v) {
  if (v.empty()) return 0;
  const size_t n = v.size();
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double upper = static_cast<double>(*mid);
  if (n % 2 == 1) return upper;
  const double lower = static_cast<double>(*std::max_element(v.begin(), mid));
  return (lower + upper) / 2;
}

}  // namespace

double Median(std::vector<double> values) { return MedianOf(values); }
double Median(std::vector<int64_t> values) { return MedianOf(values); }

}  // namespace sightline
