// GPU metrics: what the SMs did between kernel boundaries, from the samples nsys takes with
// --gpu-metrics-devices (SMs active, SM issue, tensor-core activity, DRAM bandwidth, PCIe, clocks):
// per device and metric, the distribution of the samples, and their mean while the device had work
// on the timeline against while it had none. Metrics are device-wide (other processes count too).
// Input: one AnalysisContext. docs/analyses/gpu_metrics.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "report/report.h"

namespace sightline {

struct GpuMetricsOptions {
  size_t top_kernels = 10;  // per device, by total time
};

struct GpuMetricRow {
  int32_t device = -1;
  StringId name;
  int64_t samples = 0;
  double mean = 0, p50 = 0, p90 = 0, max = 0;
  int64_t busy_samples = 0;  // samples taken while the device's busy union covered their time
  double mean_busy = 0, mean_idle = 0;
};

// What the key metrics read while one kernel ran: the mean of the samples whose time falls inside
// one of its executions on the device (device-wide metrics: concurrent kernels count too).
struct KernelMetricsRow {
  int32_t device = -1;
  StringId kernel;  // short name
  DurationNs total_ns = 0;
  int64_t samples = 0;       // samples of the first key metric taken while it ran
  std::vector<double> mean;  // parallel to GpuMetricsResult::key_metrics; NaN: no sample
};

struct GpuMetricsResult {
  std::vector<GpuMetricRow> rows;   // by device, then in the order metrics first appear
  DurationNs sample_period_ns = 0;  // median interval between samples of one metric
  // The metrics shown per kernel, those present of: SMs Active, SM Issue, Tensor Active, DRAM
  // Read Bandwidth, DRAM Write Bandwidth ([Throughput %]).
  std::vector<StringId> key_metrics;
  std::vector<KernelMetricsRow> kernels;  // the top kernels by time per device, longest first
};

StatusOr<GpuMetricsResult> ComputeGpuMetrics(AnalysisContext& context,
                                             const GpuMetricsOptions& options);
// The GPU metrics with the context's options (per kernel for the top_n longest), computed once per
// trace: what the section and the rules read.
StatusOr<const GpuMetricsResult*> CachedGpuMetrics(AnalysisContext& context);

// Registry entry: the "gpu_metrics" section, when the trace has samples.
Status RunGpuMetricsSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
