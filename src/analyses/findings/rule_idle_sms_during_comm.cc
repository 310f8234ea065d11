// Rule idle_sms_during_comm: while communication kernels run with no compute beside them (exposed
// communication), the sampled SMs Active shows the SMs mostly idle: the collective keeps a few SMs
// busy and the rest wait. A second measurement behind exposed_comm, which carries the time
// estimate. docs/analyses/findings.md, "idle_sms_during_comm".
#include <fmt/format.h>

#include <cmath>

#include "analyses/findings/findings.h"
#include "analyses/gpu_metrics/gpu_metrics_intervals.h"
#include "facts/metric_samples.h"

namespace sightline {
namespace {

constexpr double kIdleSmsMaxSmActive = 30.0;     // percent: "mostly idle"
constexpr int64_t kIdleSmsMinSamples = 3;        // to trust the mean
constexpr double kIdleSmsMinShareOfBusy = 0.05;  // exposed communication, of the device's busy time

}  // namespace

Status RuleIdleSmsDuringComm(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  if (trace.counters.size() == 0 || !c.kernels().HasCommunication()) return Status::Ok();
  StringId sm;
  for (StringId m : IntervalMetricNames(trace)) {
    const std::string_view name = trace.str(m);
    if (name.starts_with("SMs Active") || name.starts_with("SM Active")) sm = m;
  }
  if (trace.str(sm).empty()) return Status::Ok();
  const MetricSamples& samples = c.samples();
  for (int32_t device : c.gpu().GpuDevices()) {
    if (!samples.Has(device, sm)) continue;
    const CommSplit& split = c.kernels().Comm(device);
    const std::vector<Interval> exposed = SubtractIntervals(split.comm, split.compute);
    const DurationNs exposed_ns = TotalLength(exposed);
    const DurationNs busy = TotalLength(c.gpu().Busy(device));
    if (exposed_ns <= 0 || busy <= 0 ||
        static_cast<double>(exposed_ns) < kIdleSmsMinShareOfBusy * static_cast<double>(busy)) {
      continue;
    }
    const WeightedFigure f = samples.Over(device, sm, exposed);
    if (f.samples < kIdleSmsMinSamples || std::isnan(f.mean) || f.mean > kIdleSmsMaxSmActive)
      continue;
    Finding x;
    x.id = "idle_sms_during_comm";
    x.severity = Severity::kMedium;
    x.title = fmt::format(
        "GPU {}: SMs mostly idle during communication: {} of collectives run with no compute "
        "beside them, SMs Active {:.0f}% meanwhile",
        device, FormatDuration(exposed_ns), f.mean);
    x.evidence.push_back({"exposed_ns", "Exposed communication", exposed_ns, Unit::kDurationNs});
    x.evidence.push_back({"busy_ns", "Device busy time", busy, Unit::kDurationNs});
    x.evidence.push_back({"sms_active_pct", "SMs Active then", f.mean, Unit::kPercent});
    x.evidence.push_back({"samples", "Samples", f.samples, Unit::kCount});
    x.where = fmt::format("device {}", device);
    x.recommendation =
        "Give the idle SMs work during the collective: overlap communication with independent "
        "compute on another stream (the next layer's GEMM, micro-batches), fuse the all-reduce "
        "with the following norm, or use a collective that needs fewer SMs (NCCL_MAX_NCHANNELS, "
        "one-shot all-reduce for small messages; `sightline allreduce` compares them).";
    x.estimated_savings_ns = 0;  // the time is exposed_comm's estimate; this is the evidence
    for (const Interval& iv : exposed) x.AddSpan(iv.start_ns, iv.end_ns, device);
    x.SortSpans();
    out.push_back(std::move(x));
  }
  return Status::Ok();
}

}  // namespace sightline
