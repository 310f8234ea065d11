// Sampled GPU metrics as step functions per (device, metric): each sample holds its value over
// [its time, the next sample's time) (the last one for one median period), so a figure over any
// interval weights each sample by its overlap with it. Built once per trace from Trace::counters
// (TraceFacts::samples(), AnalysisContext::samples()); used by the per-iteration and per-range
// metrics (gpu_metrics_intervals.h) and the metric findings.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "facts/intervals.h"
#include "model/trace.h"

namespace sightline {

// A metric's figures over some intervals: overlap-weighted mean and percentiles, and how many
// samples they rest on (samples overlapping the intervals; 0: no figure, mean NaN).
struct WeightedFigure {
  int64_t samples = 0;
  DurationNs covered_ns = 0;  // Σ overlap
  double mean = 0, p50 = 0, p90 = 0;
};

class MetricSamples {
 public:
  explicit MetricSamples(const Trace& trace);

  bool Has(int32_t device, StringId metric) const {
    return series_.count({device, metric.value}) > 0;
  }
  // The figure of `metric` on `device` over the disjoint, sorted `intervals`.
  WeightedFigure Over(int32_t device, StringId metric,
                      const std::vector<Interval>& intervals) const;
  // The (start, end, value) steps of one metric on one device, by time; empty when none.
  struct Step {
    TimeNs start_ns, end_ns;
    double value;
  };
  const std::vector<Step>& Steps(int32_t device, StringId metric) const;
  // The devices with samples of any metric, ascending.
  std::vector<int32_t> Devices() const;

 private:
  std::map<std::pair<int32_t, uint32_t>, std::vector<Step>> series_;
};

}  // namespace sightline
