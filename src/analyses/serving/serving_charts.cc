#include "analyses/serving/serving_charts.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/stats.h"

namespace sightline {
namespace {

// The percentiles a CDF is drawn at: every 2% up to 90, then finer into the tail.
std::vector<double> CdfLevels() {
  std::vector<double> p;
  for (int i = 0; i < 90; i += 2) p.push_back(i);
  for (double x = 90; x < 99; x += 0.5) p.push_back(x);
  for (double x = 99; x < 99.9; x += 0.1) p.push_back(x);
  for (double x : {99.9, 99.95, 99.99, 100.0}) p.push_back(x);
  return p;
}

void AddCdf(Section& s, const char* key, const char* title, std::vector<double> values_ns) {
  if (values_ns.size() < 2) return;
  std::sort(values_ns.begin(), values_ns.end());
  Series& se = s.series.emplace_back();
  se.key = key;
  se.title = title;
  se.style = SeriesStyle::kCdf;
  se.x_unit = Unit::kDurationNs;
  se.y_unit = Unit::kPercent;
  for (double p : CdfLevels()) {
    se.x.push_back(PercentileOfSorted(values_ns, p));
    se.y.push_back(p);
  }
}

}  // namespace

void AddServingCharts(const RequestResults& results, Section& s) {
  std::vector<double> ttft, tpot, itl;
  for (const RequestRecord& q : results.requests) {
    if (!q.success) continue;
    ttft.push_back(q.ttft_s * 1e9);
    if (q.output_tokens > 1) {
      tpot.push_back((q.latency_s - q.ttft_s) / static_cast<double>(q.output_tokens - 1) * 1e9);
    }
    for (double g : q.itl_s) itl.push_back(g * 1e9);
  }
  AddCdf(s, "ttft_cdf", "TTFT: share of requests at or below (CDF)", ttft);
  AddCdf(s, "tpot_cdf", "TPOT: share of requests at or below (CDF)", tpot);
  AddCdf(s, "itl_cdf", "ITL: share of token gaps at or below (CDF)", itl);

  if (!results.has_start_times || itl.empty()) return;
  // The longest gap ending in each time bucket: stalls show as spikes over the run.
  double t0 = INFINITY, t1 = -INFINITY;
  struct End {
    double t, gap_ns;
  };
  std::vector<End> ends;
  for (const RequestRecord& q : results.requests) {
    if (!q.success) continue;
    double t = q.start_s + q.ttft_s;
    for (double g : q.itl_s) {
      t += g;
      ends.push_back({t, g * 1e9});
      t0 = std::min(t0, t);
      t1 = std::max(t1, t);
    }
  }
  if (!(t1 > t0) || !std::isfinite(t1 - t0)) return;
  const int buckets = static_cast<int>(std::min<size_t>(100, ends.size()));
  const double width = (t1 - t0) / buckets;
  std::vector<double> max_gap(static_cast<size_t>(buckets), 0);
  for (const End& e : ends) {
    const double at = (e.t - t0) / width;  // finite: t0 <= e.t <= t1
    const int b =
        std::clamp(static_cast<int>(std::min(at, static_cast<double>(buckets))), 0, buckets - 1);
    max_gap[static_cast<size_t>(b)] = std::max(max_gap[static_cast<size_t>(b)], e.gap_ns);
  }
  Series& se = s.series.emplace_back();
  se.key = "itl_max_over_time";
  se.title = "Longest token gap over the run (per bucket of the time since the first token)";
  se.x_unit = Unit::kTimestampNs;
  se.y_unit = Unit::kDurationNs;
  for (int b = 0; b < buckets; ++b) {
    se.x.push_back(b * width * 1e9);  // from the first token of the run
    se.y.push_back(max_gap[static_cast<size_t>(b)]);
  }
}

}  // namespace sightline
