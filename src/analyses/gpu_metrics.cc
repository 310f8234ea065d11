#include "analyses/gpu_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/analysis_context.h"
#include "analyses/intervals.h"
#include "base/stats.h"

namespace sightline {

StatusOr<GpuMetricsResult> ComputeGpuMetrics(AnalysisContext& context, const GpuMetricsOptions&) {
  const Trace& trace = context.trace();
  const CounterTable& c = trace.counters;
  GpuMetricsResult res;
  struct Acc {
    std::vector<double> values;
    double busy_sum = 0, idle_sum = 0;
    int64_t busy = 0, idle = 0;
    TimeNs last = -1;
  };
  std::map<std::pair<int32_t, uint32_t>, size_t> index;  // (device, name) -> row
  std::vector<Acc> acc;
  std::vector<double> periods;
  for (size_t i = 0; i < c.size(); ++i) {
    auto [it, inserted] = index.try_emplace({c.device[i], c.name[i].value}, res.rows.size());
    if (inserted) {
      GpuMetricRow& r = res.rows.emplace_back();
      r.device = c.device[i];
      r.name = c.name[i];
      acc.emplace_back();
    }
    Acc& a = acc[it->second];
    a.values.push_back(c.value[i]);
    // The sample's instant inside the device's busy union: a point query.
    const std::vector<Interval>& busy = context.Busy(c.device[i]);
    const bool on = BusyWithin(busy, c.time_ns[i], c.time_ns[i] + 1) > 0;
    (on ? a.busy_sum : a.idle_sum) += c.value[i];
    ++(on ? a.busy : a.idle);
    if (a.last >= 0 && periods.size() < 100'000)
      periods.push_back(static_cast<double>(c.time_ns[i] - a.last));
    a.last = c.time_ns[i];
  }
  for (size_t k = 0; k < res.rows.size(); ++k) {
    GpuMetricRow& r = res.rows[k];
    Acc& a = acc[k];
    r.samples = static_cast<int64_t>(a.values.size());
    double sum = 0;
    for (double v : a.values) sum += v;
    r.mean = sum / static_cast<double>(a.values.size());
    std::sort(a.values.begin(), a.values.end());
    r.p50 = PercentileOfSorted(a.values, 50);
    r.p90 = PercentileOfSorted(a.values, 90);
    r.max = a.values.back();
    r.busy_samples = a.busy;
    r.mean_busy = a.busy > 0 ? a.busy_sum / static_cast<double>(a.busy) : 0;
    r.mean_idle = a.idle > 0 ? a.idle_sum / static_cast<double>(a.idle) : 0;
  }
  std::stable_sort(
      res.rows.begin(), res.rows.end(),
      [](const GpuMetricRow& x, const GpuMetricRow& y) { return x.device < y.device; });
  res.sample_period_ns = static_cast<DurationNs>(Median(std::move(periods)));
  return res;
}

Status RunGpuMetricsSection(AnalysisContext& context, int input, Report& report) {
  if (context.trace().counters.size() == 0) return Status::Ok();
  ASSIGN_OR_RETURN(GpuMetricsResult r, ComputeGpuMetrics(context, GpuMetricsOptions{}));
  const Trace& trace = context.trace();
  Section& s = report.AddSection("gpu_metrics", "GPU metrics (sampled)", input);
  s.AddFact("samples", "Samples", static_cast<int64_t>(trace.counters.size()), Unit::kCount);
  s.AddFact("sample_period_ns", "Sampling period", r.sample_period_ns, Unit::kDurationNs);
  Table& t = s.AddTable("metrics", "Per device and metric",
                        {{"device", "GPU", Unit::kNumber},
                         {"metric", "metric", Unit::kText},
                         {"samples", "samples", Unit::kCount},
                         {"mean", "mean", Unit::kNumber},
                         {"p50", "p50", Unit::kNumber},
                         {"p90", "p90", Unit::kNumber},
                         {"max", "max", Unit::kNumber},
                         {"mean_busy", "mean, GPU busy", Unit::kNumber},
                         {"mean_idle", "mean, GPU idle", Unit::kNumber}});
  for (const GpuMetricRow& x : r.rows) {
    t.rows.push_back({int64_t{x.device}, std::string(trace.str(x.name)), x.samples, x.mean, x.p50,
                      x.p90, x.max, x.mean_busy, x.mean_idle});
  }
  t.note =
      "values in the unit the metric names (percent of peak, MHz); GPU busy/idle = whether the "
      "sample's time falls in the device's union of kernels and memory operations of this trace. "
      "Metrics are device-wide: other processes on the GPU count too.";
  return Status::Ok();
}

}  // namespace sightline
