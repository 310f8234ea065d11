#include "analyses/gpu_metrics/gpu_metrics_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <string_view>

#include "analyses/common/analysis_context.h"
#include "analyses/gpu_metrics/gpu_metrics_intervals.h"
#include "analyses/overview/overview.h"

namespace sightline {
namespace {

// The charts and the metrics each draws, by name prefix (the metrics IntervalMetricNames picks:
// one spelling of each, [Throughput %]).
struct ChartKind {
  std::string_view key, title;
  std::vector<std::string_view> prefixes;
};

const std::vector<ChartKind>& ChartKinds() {
  static const std::vector<ChartKind> kKinds = {
      {"compute", "compute", {"GR Active", "SMs Active", "SM Active", "SM Issue", "Tensor Active"}},
      {"memory", "DRAM bandwidth", {"DRAM Read Bandwidth", "DRAM Write Bandwidth"}},
      {"interconnect", "PCIe / NVLink", {"PCIe RX", "PCIe TX", "NVLink RX", "NVLink TX"}},
  };
  return kKinds;
}

bool InKind(const ChartKind& kind, std::string_view name) {
  return std::any_of(kind.prefixes.begin(), kind.prefixes.end(), [&](std::string_view p) {
    return name.starts_with(p) && (name.size() == p.size() || name[p.size()] == ' ');
  });
}

std::string ShortTitle(std::string_view name) {
  return std::string(name.substr(0, name.find(" [")));
}

}  // namespace

MetricBuckets BucketMetric(const std::vector<MetricSamples::Step>& steps, TimeNs origin,
                           DurationNs span, int buckets) {
  MetricBuckets out;
  const double none = std::numeric_limits<double>::quiet_NaN();
  out.mean.assign(static_cast<size_t>(std::max(buckets, 0)), none);
  out.max.assign(out.mean.size(), none);
  if (buckets <= 0 || span <= 0) return out;
  for (const MetricSamples::Step& s : steps) {
    if (s.end_ns > origin && s.start_ns < origin + span) ++out.samples;
  }
  size_t k = 0;  // the first step that may overlap the current bucket
  for (int b = 0; b < buckets; ++b) {
    const TimeNs a = origin + span * b / buckets, e = origin + span * (b + 1) / buckets;
    while (k < steps.size() && steps[k].end_ns <= a) ++k;
    double sum = 0, max = -std::numeric_limits<double>::infinity();
    DurationNs covered = 0;
    // A step longer than the bucket stays at k for the next one.
    for (size_t j = k; j < steps.size() && steps[j].start_ns < e; ++j) {
      const DurationNs overlap = std::min(e, steps[j].end_ns) - std::max(a, steps[j].start_ns);
      if (overlap <= 0) continue;
      sum += steps[j].value * static_cast<double>(overlap);
      covered += overlap;
      max = std::max(max, steps[j].value);
    }
    if (covered > 0) {
      out.mean[b] = sum / static_cast<double>(covered);
      out.max[b] = max;
    }
  }
  return out;
}

Status AddMetricCharts(AnalysisContext& context, Section& section) {
  const Trace& trace = context.trace();
  const TimeNs origin = trace.begin_ns();
  const DurationNs span = trace.end_ns() - origin;
  if (span <= 0) return Status::Ok();
  const std::vector<StringId> metrics = IntervalMetricNames(trace);
  if (metrics.empty()) return Status::Ok();
  const MetricSamples& samples = context.samples();
  std::set<int32_t> devices(trace.counters.device.begin(), trace.counters.device.end());
  std::vector<double> x;
  for (int b = 0; b < kUtilizationBuckets; ++b) {
    x.push_back(static_cast<double>(span * b / kUtilizationBuckets));
  }
  for (int32_t device : devices) {
    for (const ChartKind& kind : ChartKinds()) {
      std::vector<Series::Line> lines;
      for (StringId m : metrics) {
        const std::string_view name = trace.str(m);
        if (!InKind(kind, name) || !samples.Has(device, m)) continue;
        MetricBuckets b = BucketMetric(samples.Steps(device, m), origin, span, kUtilizationBuckets);
        if (b.samples == 0) continue;  // all outside the trace's span: nothing to draw
        lines.push_back({ShortTitle(name), std::move(b.mean), std::move(b.max)});
      }
      if (lines.empty()) continue;
      Series& se = section.series.emplace_back();
      se.key = fmt::format("gpu_metrics_{}_device_{}", kind.key, device);
      se.title = fmt::format("GPU {} {} over time (sampled, % of peak)", device, kind.title);
      se.style = SeriesStyle::kOverTime;
      se.x_unit = Unit::kDurationNs;
      se.y_unit = Unit::kPercent;
      se.x = x;
      se.lines = std::move(lines);
    }
  }
  return Status::Ok();
}

}  // namespace sightline
