#include "analyses/gpu_metrics/gpu_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "analyses/common/analysis_context.h"
#include "analyses/gpu_metrics/gpu_metrics_charts.h"
#include "analyses/gpu_metrics/gpu_metrics_intervals.h"
#include "base/stats.h"
#include "facts/intervals.h"

namespace sightline {

StatusOr<const GpuMetricsResult*> CachedGpuMetrics(AnalysisContext& context) {
  return context.results().Get<GpuMetricsResult>("gpu_metrics", [&context] {
    GpuMetricsOptions o;
    o.top_kernels = static_cast<size_t>(std::max(context.options().top_n, 1));
    return ComputeGpuMetrics(context, o);
  });
}

StatusOr<GpuMetricsResult> ComputeGpuMetrics(AnalysisContext& context,
                                             const GpuMetricsOptions& options) {
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
    const std::vector<Interval>& busy = context.gpu().Busy(c.device[i]);
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
  // By device, then in the order the source named its metrics (their string ids), not the order
  // of the samples: samples of one instant come in no guaranteed order (nsys 2025.6 and later).
  std::sort(res.rows.begin(), res.rows.end(), [](const GpuMetricRow& x, const GpuMetricRow& y) {
    return x.device != y.device ? x.device < y.device : x.name.value < y.name.value;
  });
  res.sample_period_ns = static_cast<DurationNs>(Median(std::move(periods)));

  // The key metrics, in a fixed order, those the trace has (names as nsys's metric sets spell
  // them; older sets say "SM Active" and "Tensor Active / FP16 Active").
  static constexpr std::string_view kKeys[] = {
      "SMs Active",    "SM Active",           "SM Issue",
      "Tensor Active", "DRAM Read Bandwidth", "DRAM Write Bandwidth"};
  for (std::string_view key : kKeys) {
    for (const GpuMetricRow& r : res.rows) {
      const std::string_view name = trace.str(r.name);
      if (name.starts_with(key) && name.find("[Throughput %]") != std::string_view::npos &&
          std::find(res.key_metrics.begin(), res.key_metrics.end(), r.name) ==
              res.key_metrics.end()) {
        if (key == "SM Active" && !res.key_metrics.empty() &&
            trace.str(res.key_metrics[0]).starts_with("SMs Active")) {
          continue;  // one of the two spellings
        }
        res.key_metrics.push_back(r.name);
      }
    }
  }
  if (res.key_metrics.empty()) return res;
  // Per device, the top kernels by time and the union of each one's executions.
  const KernelTable& k = trace.kernels;
  std::map<std::pair<int32_t, uint32_t>, DurationNs> time;  // (device, short name)
  for (size_t i = 0; i < k.size(); ++i) time[{k.device[i], k.short_name[i].value}] += k.dur_ns(i);
  std::map<int32_t, std::vector<std::pair<DurationNs, uint32_t>>> by_device;
  for (const auto& [key, ns] : time) by_device[key.first].push_back({ns, key.second});
  std::map<std::pair<int32_t, uint32_t>, size_t> slot;  // -> index in res.kernels
  std::vector<std::vector<Interval>> unions;
  for (auto& [device, v] : by_device) {
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t j = 0; j < std::min(options.top_kernels, v.size()); ++j) {
      slot[{device, v[j].second}] = res.kernels.size();
      KernelMetricsRow& row = res.kernels.emplace_back();
      row.device = device;
      row.kernel = StringId{v[j].second};
      row.total_ns = v[j].first;
      unions.emplace_back();
    }
  }
  for (size_t i = 0; i < k.size(); ++i) {  // by start: the unions build in order
    auto it = slot.find({k.device[i], k.short_name[i].value});
    if (it != slot.end()) AppendToUnion(unions[it->second], k.start_ns[i], k.end_ns[i]);
  }
  std::vector<std::vector<double>> sums(res.kernels.size(),
                                        std::vector<double>(res.key_metrics.size(), 0));
  std::vector<std::vector<int64_t>> counts(res.kernels.size(),
                                           std::vector<int64_t>(res.key_metrics.size(), 0));
  for (size_t i = 0; i < c.size(); ++i) {
    const auto m = std::find(res.key_metrics.begin(), res.key_metrics.end(), c.name[i]);
    if (m == res.key_metrics.end()) continue;
    const size_t mi = static_cast<size_t>(m - res.key_metrics.begin());
    for (size_t j = 0; j < res.kernels.size(); ++j) {
      if (res.kernels[j].device != c.device[i]) continue;
      if (BusyWithin(unions[j], c.time_ns[i], c.time_ns[i] + 1) == 0) continue;
      sums[j][mi] += c.value[i];
      ++counts[j][mi];
    }
  }
  for (size_t j = 0; j < res.kernels.size(); ++j) {
    KernelMetricsRow& row = res.kernels[j];
    row.samples = counts[j][0];
    for (size_t mi = 0; mi < res.key_metrics.size(); ++mi) {
      row.mean.push_back(counts[j][mi] > 0 ? sums[j][mi] / static_cast<double>(counts[j][mi])
                                           : std::nan(""));
    }
  }
  return res;
}

Status RunGpuMetricsSection(AnalysisContext& context, int input, Report& report) {
  if (context.trace().counters.size() == 0) return Status::Ok();
  ASSIGN_OR_RETURN(const GpuMetricsResult* result, CachedGpuMetrics(context));
  const GpuMetricsResult& r = *result;
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
  if (!r.kernels.empty()) {
    std::vector<Column> columns = {{"device", "GPU", Unit::kNumber},
                                   {"kernel", "kernel", Unit::kText},
                                   {"total_ns", "kernel time", Unit::kDurationNs},
                                   {"samples", "samples", Unit::kCount}};
    for (StringId m : r.key_metrics) {
      std::string name(trace.str(m));
      const size_t bracket = name.find(" [");
      const std::string title = bracket == std::string::npos ? name : name.substr(0, bracket);
      std::string key;
      for (char ch : title)
        key += std::isalnum(static_cast<unsigned char>(ch)) ? std::tolower(ch) : '_';
      columns.push_back({key + "_pct", title + " %", Unit::kNumber});
    }
    Table& kt = s.AddTable("per_kernel", "What the SMs did while each kernel ran", columns);
    for (const KernelMetricsRow& x : r.kernels) {
      std::vector<Value> row = {int64_t{x.device}, std::string(trace.str(x.kernel)), x.total_ns,
                                x.samples};
      for (double v : x.mean) {
        if (std::isnan(v)) {
          row.emplace_back(std::monostate{});
        } else {
          row.emplace_back(v);
        }
      }
      kt.rows.push_back(std::move(row));
    }
    kt.note = fmt::format(
        "mean of the samples taken while the kernel ran on the device (a kernel shorter than the "
        "sampling period of {} is caught by few samples or none); device-wide, so kernels running "
        "beside it count too",
        FormatDuration(r.sample_period_ns));
  }
  RETURN_IF_ERROR(AddIntervalMetricTables(context, s));
  // The metrics over time per device, lined up with the overview's utilization chart.
  RETURN_IF_ERROR(AddMetricCharts(context, s));
  return Status::Ok();
}

}  // namespace sightline
