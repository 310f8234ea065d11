// The sampled GPU metrics per iteration and per NVTX range / annotation: for each, the
// overlap-weighted mean, p50 and p90 of GR Active, SMs Active, SM Issue, Tensor Active, DRAM read
// and write, PCIe and NVLink (those the trace has) over the GPU time of the work it launched, with
// how many samples each figure rests on (none: no figure). Replayed CUDA graph kernels count in
// the ranges of their capture (or eager counterpart), one GPU span per replay, as in the NVTX
// projection. Ranges that launched no GPU work have their figures over their own time, in a table
// of their own. Part of the gpu_metrics section. Input: one AnalysisContext.
// docs/analyses/gpu_metrics.md, "Per iteration and per range".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "facts/metric_samples.h"
#include "report/report.h"

namespace sightline {

struct IntervalMetricsOptions {
  size_t top_ranges = 10;  // range names per device, by the GPU time they cover
};

struct IntervalMetricsRow {
  std::string label;   // "step3" (iterations: the range's name) or the range name
  int64_t index = -1;  // iterations: the index in the main set
  int32_t device = -1;
  int64_t instances = 1;   // ranges: how many ranges of the name launched work on the device
  DurationNs span_ns = 0;  // length of the intervals (the union of the work's GPU spans)
  std::vector<WeightedFigure> figures;  // parallel to IntervalMetricsResult::metrics
};

struct IntervalMetricsResult {
  std::vector<StringId> metrics;  // the metrics shown, in a fixed order
  std::vector<IntervalMetricsRow> iterations, ranges;
  // Ranges that launched no GPU work (and hold no graph kernel): figures over the range's own
  // time, on each GPU its process used (all GPUs with samples when it used none), so a range
  // during which the GPU sat idle shows SMs Active near 0 instead of being missing. span_ns is
  // the union of the ranges' own times; top_ranges names per device by it.
  std::vector<IntervalMetricsRow> quiet_ranges;
  // Replayed graph kernels and how many the ranges hold at their capture or their eager
  // counterpart (each kernel once, whichever ranges hold it); the others count only in the
  // ranges around their graph launch.
  int64_t graph_kernels = 0, graph_kernels_by_capture = 0, graph_kernels_by_alignment = 0;
};

// The metrics shown per interval, those present in the trace, in the order.
std::vector<StringId> IntervalMetricNames(const Trace& trace);
// The first of `names` that starts with `prefix` ("DRAM Read"); StringId{} (the empty string) when
// none does.
StringId FindMetric(const std::vector<StringId>& names, const Trace& trace,
                    std::string_view prefix);

StatusOr<IntervalMetricsResult> ComputeIntervalMetrics(AnalysisContext& context,
                                                       const IntervalMetricsOptions& options);

// Adds the per-iteration and per-range tables to the gpu_metrics section.
Status AddIntervalMetricTables(AnalysisContext& context, Section& section);

}  // namespace sightline
