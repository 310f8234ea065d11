// Overview: what the trace holds and how busy each GPU was. Time span, devices, processes and
// threads, counts of each event kind, and GPU busy time / utilization per device and per
// (device, stream) as defined in docs/metrics.md ("GPU busy", "Utilization").
// Input: one Trace. Units: ns, %. docs/analyses/overview.md.
#pragma once

#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

struct OverviewOptions {};

// The utilization chart's buckets: equal parts of the trace's span, x = bucket start from the
// trace's begin. Charts over time that are meant to line up with it use the same (the sampled GPU
// metrics, gpu_metrics_charts.h).
inline constexpr int kUtilizationBuckets = 200;

struct EventCounts {
  int64_t kernels = 0;
  int64_t memcpys = 0;  // memory copies (every MemOpKind but memset)
  int64_t memsets = 0;
  int64_t runtime_calls = 0;
  int64_t driver_calls = 0;
  int64_t nvtx_ranges = 0;       // NVTX push/pop and start/end ranges
  int64_t annotations = 0;       // PyTorch record_function / user annotations
  int64_t cpu_ops = 0;           // PyTorch operators
  int64_t python_functions = 0;  // PyTorch python stack frames
};

struct DeviceUsage {
  int32_t device = -1;
  const DeviceInfo* info = nullptr;  // into Trace::devices; null when the trace has no device info
  int64_t kernels = 0, memops = 0;
  TimeNs first_ns = 0, last_ns = 0;  // first GPU event start, last GPU event end on the device
  DurationNs active_span_ns = 0;     // last_ns - first_ns
  DurationNs busy_ns = 0;            // union of kernel and memory-operation intervals
  double utilization_pct = 0;        // busy_ns / active_span_ns * 100
};

struct StreamUsage {
  int32_t device = -1, stream = -1;
  int64_t kernels = 0, memops = 0;
  DurationNs busy_ns = 0;      // union of this stream's kernel and memory-operation intervals
  double utilization_pct = 0;  // busy_ns / the device's active_span_ns * 100
};

struct ProcessUsage {
  int32_t pid = -1;
  std::string name;     // empty when unknown
  int64_t threads = 0;  // distinct threads seen in host events or thread info
};

struct OverviewResult {
  TimeNs begin_ns = 0, end_ns = 0;  // first and last timestamp of any event
  DurationNs duration_ns = 0;
  EventCounts counts;
  std::vector<DeviceUsage> devices;     // every device with GPU work or device info, by id
  std::vector<StreamUsage> streams;     // by device, then busy time descending
  std::vector<ProcessUsage> processes;  // by pid
  int64_t threads = 0;                  // distinct (pid, tid) over all processes
};

StatusOr<OverviewResult> ComputeOverview(AnalysisContext& context, const OverviewOptions& options);

// Section "overview": span, counts, devices with utilization, streams, processes.
Status RunOverviewSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
