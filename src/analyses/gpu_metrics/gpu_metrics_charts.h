// The sampled GPU metrics over time, per device, as charts that line up with the overview's
// utilization chart (same buckets of the trace's span, same origin, the iteration marks): compute
// (GR Active, SMs Active, SM Issue, Tensor Active), memory (DRAM read and write) and interconnect
// (PCIe RX/TX, NVLink RX/TX), those the device has; a metric without samples is absent, never zero.
// Each bucket keeps the overlap-weighted mean of the metric and its largest sample, so a trace of
// 10^5 or 10^7 samples gives a chart of the same small size without hiding a peak. Part of the
// gpu_metrics section. docs/analyses/gpu_metrics.md, "Over time".
#pragma once

#include <cstdint>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "facts/metric_samples.h"
#include "report/report.h"

namespace sightline {

// One metric on one device over `buckets` equal parts of [origin, origin + span): part b is
// [origin + span * b / buckets, origin + span * (b + 1) / buckets), as the utilization chart's.
struct MetricBuckets {
  // Per bucket: the mean of the samples weighted by how much of the bucket each covers (a sample
  // holds until the next one, MetricSamples), and the largest sample overlapping it; NaN in both
  // where no sample covers any of the bucket.
  std::vector<double> mean, max;
  int64_t samples = 0;  // samples overlapping [origin, origin + span)
};

MetricBuckets BucketMetric(const std::vector<MetricSamples::Step>& steps, TimeNs origin,
                           DurationNs span, int buckets);

// Adds the series `gpu_metrics_{compute,memory,interconnect}_device_N` (style kOverTime, one line
// per metric with its max band) to the gpu_metrics section; none when the trace span is empty.
Status AddMetricCharts(AnalysisContext& context, Section& section);

}  // namespace sightline
