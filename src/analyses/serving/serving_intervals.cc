#include "analyses/serving/serving_intervals.h"

#include <algorithm>
#include <random>

namespace sightline {
namespace {

// The percentiles `p` (ascending) of the multiset in which value k appears weight[request[k]]
// times (values sorted): np.percentile's linear rule on that multiset, found by one walk without
// expanding it. `per_request`: how many values each request has.
void WeightedPercentiles(const ServingSamples::Metric& m, const std::vector<uint32_t>& per_request,
                         const std::vector<uint32_t>& weight, const std::vector<double>& p,
                         std::vector<double>& out) {
  uint64_t total = 0;
  for (size_t r = 0; r < weight.size(); ++r) total += uint64_t{weight[r]} * per_request[r];
  out.assign(p.size(), std::nan(""));
  if (total == 0) return;
  // For each percentile: the positions lo and lo + 1 of the expanded multiset, and their values.
  std::vector<uint64_t> lo(p.size());
  std::vector<double> frac(p.size()), at_lo(p.size(), std::nan("")), at_hi(p.size(), std::nan(""));
  for (size_t j = 0; j < p.size(); ++j) {
    const double rank = p[j] / 100.0 * static_cast<double>(total - 1);
    lo[j] = static_cast<uint64_t>(std::floor(rank));
    frac[j] = rank - static_cast<double>(lo[j]);
  }
  size_t next = 0;  // the first percentile whose upper value is not found yet
  uint64_t seen = 0;
  for (size_t k = 0; k < m.sorted_ns.size() && next < p.size(); ++k) {
    const uint32_t w = weight[m.request[k]];
    if (w == 0) continue;
    seen += w;  // this value holds positions [seen - w, seen)
    for (size_t j = next; j < p.size(); ++j) {
      if (std::isnan(at_lo[j]) && lo[j] < seen) at_lo[j] = m.sorted_ns[k];
      if (std::isnan(at_hi[j]) && lo[j] + 1 < seen) at_hi[j] = m.sorted_ns[k];
    }
    while (next < p.size() && !std::isnan(at_hi[next])) ++next;
  }
  for (size_t j = 0; j < p.size(); ++j) {
    const double hi = std::isnan(at_hi[j]) ? at_lo[j] : at_hi[j];  // lo was the last position
    out[j] = at_lo[j] + frac[j] * (hi - at_lo[j]);
  }
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::vector<uint32_t> PerRequest(const ServingSamples& run, const ServingSamples::Metric& m) {
  std::vector<uint32_t> n(run.requests, 0);
  for (uint32_t r : m.request) {
    if (r < n.size()) ++n[r];
  }
  return n;
}

}  // namespace

std::vector<ChangeInterval> PercentileChangeIntervals(const ServingSamples& before_run,
                                                      const ServingSamples::Metric& before,
                                                      const ServingSamples& after_run,
                                                      const ServingSamples::Metric& after,
                                                      const std::vector<double>& p, int draws,
                                                      uint64_t seed) {
  std::vector<ChangeInterval> out(p.size());
  if (before.sorted_ns.empty() || after.sorted_ns.empty() || draws <= 0 ||
      !std::is_sorted(p.begin(), p.end())) {
    return out;
  }
  for (const ServingSamples::Metric* m : {&before, &after}) {
    const uint32_t n = m == &before ? before_run.requests : after_run.requests;
    for (uint32_t r : m->request) {
      if (r >= n) return out;  // samples of another run: nothing to say
    }
  }
  const std::vector<uint32_t> nb = PerRequest(before_run, before),
                              na = PerRequest(after_run, after);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> wb(before_run.requests, 0), wa(after_run.requests, 0);
  auto draw = [&rng](std::vector<uint32_t>& w) {
    std::fill(w.begin(), w.end(), 0);
    // Modulo keeps the draws the same on every standard library; its bias is below n / 2^64.
    for (size_t i = 0; i < w.size(); ++i) ++w[rng() % w.size()];
  };
  std::vector<std::vector<double>> change(p.size());
  std::vector<int> undefined(p.size(), 0);
  std::vector<double> x, y;
  for (int k = 0; k < draws; ++k) {
    draw(wb);
    draw(wa);
    WeightedPercentiles(before, nb, wb, p, x);
    WeightedPercentiles(after, na, wa, p, y);
    for (size_t j = 0; j < p.size(); ++j) {
      if (!(x[j] > 0) || !std::isfinite(y[j])) {
        ++undefined[j];
      } else {
        change[j].push_back((y[j] / x[j] - 1) * 100);
      }
    }
  }
  for (size_t j = 0; j < p.size(); ++j) {
    if (change[j].empty() || undefined[j] * 2 > draws) continue;
    out[j].lo = Quantile(change[j], 0.025);
    out[j].hi = Quantile(change[j], 0.975);
  }
  return out;
}

}  // namespace sightline
