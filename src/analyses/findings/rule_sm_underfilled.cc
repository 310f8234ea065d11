// Rule sm_underfilled: the timeline shows a device busy, but the sampled GPU metrics show its SMs
// mostly empty while its longest kernels run (small grids, tiny or latency-bound kernels,
// launch-bound loops). docs/analyses/findings.md, "sm_underfilled".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyses/findings/findings.h"
#include "analyses/gpu_metrics/gpu_metrics.h"

namespace sightline {
namespace {

constexpr double kUnderfilledMaxSmActive = 40.0;     // percent: "mostly empty"
constexpr int64_t kUnderfilledMinSamples = 10;       // per kernel, to trust its mean
constexpr double kUnderfilledMinShareOfBusy = 0.10;  // the kernels' time, of the device's busy time

}  // namespace

Status RuleSmUnderfilled(AnalysisContext& c, std::vector<Finding>& out) {
  if (c.trace().counters.size() == 0) return Status::Ok();
  ASSIGN_OR_RETURN(const GpuMetricsResult* r, CachedGpuMetrics(c));
  if (r->key_metrics.empty()) return Status::Ok();
  const Trace& trace = c.trace();
  const std::string_view metric = trace.str(r->key_metrics[0]);
  if (!metric.starts_with("SMs Active") && !metric.starts_with("SM Active")) return Status::Ok();
  for (int32_t device : c.gpu().GpuDevices()) {
    const DurationNs busy = TotalLength(c.gpu().Busy(device));
    if (busy <= 0) continue;
    DurationNs low_ns = 0, bound_ns = 0;
    std::string names;
    int listed = 0;
    for (const KernelMetricsRow& k : r->kernels) {
      if (k.device != device || k.samples < kUnderfilledMinSamples || std::isnan(k.mean[0]))
        continue;
      if (k.mean[0] > kUnderfilledMaxSmActive) continue;
      low_ns += k.total_ns;
      bound_ns +=
          static_cast<DurationNs>(static_cast<double>(k.total_ns) * (1.0 - k.mean[0] / 100));
      if (listed++ < 3) {
        names += fmt::format("{}{} ({}, SMs active {:.0f}%)", names.empty() ? "" : ", ",
                             trace.str(k.kernel), FormatDuration(k.total_ns), k.mean[0]);
      }
    }
    const double share = static_cast<double>(low_ns) / static_cast<double>(busy);
    if (low_ns <= 0 || share < kUnderfilledMinShareOfBusy) continue;
    Finding f;
    f.id = "sm_underfilled";
    f.severity = share >= 0.5 ? Severity::kHigh : Severity::kMedium;
    f.title = fmt::format(
        "GPU {} is busy on the timeline but its SMs are mostly empty: {} of kernel time ({} of its "
        "busy time) runs with SMs active {:.0f}% or less",
        device, FormatDuration(low_ns), Percent(share, 1.0), kUnderfilledMaxSmActive);
    f.evidence.push_back(
        {"kernel_ns", "Kernel time with SMs mostly empty", low_ns, Unit::kDurationNs});
    f.evidence.push_back({"busy_ns", "Device busy time", busy, Unit::kDurationNs});
    f.evidence.push_back({"share_pct", "Share of busy time", 100.0 * share, Unit::kPercent});
    f.evidence.push_back({"kernels", "Kernels", names});
    f.where = fmt::format("device {}: {}", device, names);
    f.recommendation =
        "Fill the SMs: larger grids or more work per launch (check the small_grid finding and "
        "the occupancy calculator, `sightline occupancy`), fuse tiny kernels, batch more "
        "requests per step, or capture the loop in a CUDA graph when the kernels are short; "
        "profile the kernel with Nsight Compute (`sightline ncu`) to see whether it is latency-"
        "bound.";
    // An upper bound: the kernels' time times the share of SMs they left idle.
    f.estimated_savings_ns = bound_ns;
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
