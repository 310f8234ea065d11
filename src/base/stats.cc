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

namespace sightline {

namespace {

// The continued fraction of the regularized incomplete beta function I_x(a, b) (modified Lentz),
// valid for x < (a + 1) / (a + b + 2).
double BetaFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    d = std::abs(d) < kTiny ? 1 / kTiny : 1 / d;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    d = std::abs(d) < kTiny ? 1 / kTiny : 1 / d;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < kEps) break;
  }
  return h;
}

// I_x(a, b) for 0 <= x <= 1.
double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaFraction(a, b, x) / a;
  return 1 - front * BetaFraction(b, a, 1 - x) / b;
}

// P(T <= t) for Student's t with df degrees of freedom.
double StudentTCdf(double t, double df) {
  const double tail = 0.5 * RegularizedBeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

}  // namespace

double StudentTQuantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0) || !std::isfinite(df)) return std::nan("");
  if (p == 0.5) return 0;
  if (p < 0.5) return -StudentTQuantile(1 - p, df);
  double lo = 0, hi = 1;
  while (StudentTCdf(hi, df) < p) {
    lo = hi;
    hi *= 2;
    if (hi > 1e12) return hi;  // df far below 1 and p near 1: beyond any use
  }
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (StudentTCdf(mid, df) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

namespace {

double MeanOfRuns(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double VarianceOfRuns(const std::vector<double>& v) {
  const double m = MeanOfRuns(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size() - 1);
}

}  // namespace

double BetweenRunsHalfWidth(const std::vector<double>& before, const std::vector<double>& after,
                            double confidence) {
  const double nan = std::nan("");
  for (const std::vector<double>* v : {&before, &after}) {
    for (double x : *v) {
      if (!std::isfinite(x)) return nan;
    }
  }
  const double nb = static_cast<double>(before.size()), na = static_cast<double>(after.size());
  double se = nan, df = nan;
  if (before.size() >= 2 && after.size() >= 2) {
    const double vb = VarianceOfRuns(before) / nb, va = VarianceOfRuns(after) / na;
    se = std::sqrt(vb + va);
    const double denom = vb * vb / (nb - 1) + va * va / (na - 1);
    df = denom > 0 ? (vb + va) * (vb + va) / denom : std::min(nb, na) - 1;
  } else if (!before.empty() && !after.empty() && (before.size() >= 2 || after.size() >= 2)) {
    const std::vector<double>& several = before.size() >= 2 ? before : after;
    se = std::sqrt(VarianceOfRuns(several) * (1 / nb + 1 / na));
    df = static_cast<double>(several.size()) - 1;
  }
  if (!std::isfinite(se)) return nan;
  if (se == 0) return 0;
  return StudentTQuantile(1 - (1 - confidence) / 2, df) * se;
}

}  // namespace sightline
