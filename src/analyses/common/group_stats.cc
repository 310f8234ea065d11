#include "analyses/common/group_stats.h"

#include <algorithm>
#include <cmath>

#include "base/saturating.h"

namespace sightline {
namespace {

// The value of rank r (0-based) in sorted order, leaving [begin, end) partitioned around it.
int64_t SelectRank(int64_t* begin, int64_t* end, size_t r) {
  std::nth_element(begin, begin + r, end);
  return begin[r];
}

// Percentile p with linear interpolation between closest ranks, as PercentileOfSorted.
double SelectPercentile(int64_t* begin, int64_t* end, double p) {
  const size_t n = static_cast<size_t>(end - begin);
  const double rank = p / 100.0 * static_cast<double>(n - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const int64_t lo_value = SelectRank(begin, end, lo);
  if (lo + 1 >= n) return static_cast<double>(lo_value);
  // After nth_element everything right of lo is >= lo_value: the next rank is their minimum.
  const int64_t hi_value = *std::min_element(begin + lo + 1, end);
  const double frac = rank - static_cast<double>(lo);
  return static_cast<double>(lo_value) + frac * static_cast<double>(hi_value - lo_value);
}

}  // namespace

DurationStats StatsBySelection(int64_t* begin, int64_t* end) {
  DurationStats s;
  const size_t n = static_cast<size_t>(end - begin);
  if (n == 0) return s;
  s.count = static_cast<int64_t>(n);
  long double sum = 0;
  int64_t lo = begin[0], hi = begin[0];
  for (const int64_t* v = begin; v != end; ++v) {
    sum += *v;
    lo = std::min(lo, *v);
    hi = std::max(hi, *v);
  }
  s.total = SaturatingTotal(sum);
  s.mean = static_cast<double>(sum / s.count);
  s.min = lo;
  s.max = hi;
  if (n > 1) {
    long double ss = 0;
    for (const int64_t* v = begin; v != end; ++v) {
      const long double d = *v - static_cast<long double>(s.mean);
      ss += d * d;
    }
    s.stddev = static_cast<double>(std::sqrt(ss / (n - 1)));
  }
  const int64_t upper_mid = SelectRank(begin, end, n / 2);
  if (n % 2) {
    s.median = static_cast<double>(upper_mid);
  } else {
    const int64_t lower_mid = *std::max_element(begin, begin + n / 2);
    s.median = (static_cast<double>(lower_mid) + static_cast<double>(upper_mid)) / 2;
  }
  s.p90 = SelectPercentile(begin, end, 90);
  s.p99 = SelectPercentile(begin, end, 99);
  return s;
}

}  // namespace sightline
