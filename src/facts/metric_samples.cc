#include "facts/metric_samples.h"

#include <algorithm>
#include <cmath>

#include "base/stats.h"

namespace sightline {

MetricSamples::MetricSamples(const Trace& trace) {
  const CounterTable& c = trace.counters;
  for (size_t i = 0; i < c.size(); ++i) {  // by time
    std::vector<Step>& s = series_[{c.device[i], c.name[i].value}];
    if (!s.empty()) s.back().end_ns = c.time_ns[i];
    s.push_back({c.time_ns[i], c.time_ns[i], c.value[i]});
  }
  for (auto& [key, s] : series_) {
    std::vector<double> periods;
    for (size_t k = 0; k + 1 < s.size(); ++k) {
      periods.push_back(static_cast<double>(s[k].end_ns - s[k].start_ns));
    }
    const DurationNs period =
        periods.empty() ? 0 : static_cast<DurationNs>(Median(std::move(periods)));
    s.back().end_ns = s.back().start_ns + period;
    // Two samples at one time: the first covers nothing.
  }
}

const std::vector<MetricSamples::Step>& MetricSamples::Steps(int32_t device,
                                                             StringId metric) const {
  static const std::vector<Step> kNone;
  auto it = series_.find({device, metric.value});
  return it == series_.end() ? kNone : it->second;
}

WeightedFigure MetricSamples::Over(int32_t device, StringId metric,
                                   const std::vector<Interval>& intervals) const {
  WeightedFigure f;
  const std::vector<Step>& s = Steps(device, metric);
  if (s.empty()) return f;
  std::vector<std::pair<double, DurationNs>> weighted;  // value, overlap
  int64_t last = -1;  // a sample overlapping two intervals counts once
  for (const Interval& in : intervals) {
    auto k = std::partition_point(s.begin(), s.end(),
                                  [&](const Step& x) { return x.end_ns <= in.start_ns; });
    for (; k != s.end() && k->start_ns < in.end_ns; ++k) {
      const DurationNs overlap =
          std::min(in.end_ns, k->end_ns) - std::max(in.start_ns, k->start_ns);
      if (overlap <= 0) continue;
      weighted.push_back({k->value, overlap});
      const int64_t index = k - s.begin();
      if (index != last) ++f.samples;
      last = index;
    }
  }
  if (weighted.empty()) {
    f.mean = f.p50 = f.p90 = std::nan("");
    return f;
  }
  double sum = 0;
  for (const auto& [v, w] : weighted) {
    sum += v * static_cast<double>(w);
    f.covered_ns += w;
  }
  f.mean = sum / static_cast<double>(f.covered_ns);
  // Weighted percentiles: the value at which the cumulative overlap reaches p% of the total.
  std::sort(weighted.begin(), weighted.end());
  auto at = [&](double p) {
    const double target = p / 100.0 * static_cast<double>(f.covered_ns);
    double acc = 0;
    for (const auto& [v, w] : weighted) {
      acc += static_cast<double>(w);
      if (acc >= target) return v;
    }
    return weighted.back().first;
  };
  f.p50 = at(50);
  f.p90 = at(90);
  return f;
}

std::vector<int32_t> MetricSamples::Devices() const {
  std::vector<int32_t> out;
  for (const auto& [key, steps] : series_) {
    if (out.empty() || out.back() != key.first) out.push_back(key.first);
  }
  return out;
}

}  // namespace sightline
