// Rule busy_but_empty: stretches where the GPU has work (GR Active high) while its SMs are nearly
// empty (SMs Active and SM Issue low): the signature of many tiny kernels, launch-bound loops and
// one-block grids. A second measurement beside launch_bound and small_grid, from the sampled GPU
// metrics alone. docs/analyses/findings.md, "busy_but_empty".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analyses/findings/findings.h"
#include "analyses/gpu_metrics/gpu_metrics_intervals.h"
#include "facts/metric_samples.h"

namespace sightline {
namespace {

constexpr double kMinGrActive = 50.0;          // percent
constexpr double kMaxSmsActive = 15.0;         // percent
constexpr double kMaxSmIssue = 10.0;           // percent
constexpr double kEmptyMinShareOfBusy = 0.10;  // of the device's busy time
constexpr int64_t kEmptyMinSamples = 3;

}  // namespace

Status RuleBusyButEmpty(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  if (trace.counters.size() == 0) return Status::Ok();
  const std::vector<StringId> names = IntervalMetricNames(trace);
  const StringId gr = FindMetric(names, trace, "GR Active");
  StringId sms = FindMetric(names, trace, "SMs Active");
  if (trace.str(sms).empty()) sms = FindMetric(names, trace, "SM Active");
  const StringId issue = FindMetric(names, trace, "SM Issue");
  if (trace.str(gr).empty() || trace.str(sms).empty()) return Status::Ok();
  const MetricSamples& samples = c.samples();
  for (int32_t device : c.gpu().GpuDevices()) {
    const DurationNs busy_ns = TotalLength(c.gpu().Busy(device));
    if (busy_ns <= 0) continue;
    std::vector<Interval> phases;
    int64_t n = 0;
    double gr_sum = 0, sms_sum = 0, issue_sum = 0;
    for (const MetricSamples::Step& s : samples.Steps(device, gr)) {
      if (s.end_ns <= s.start_ns || s.value < kMinGrActive) continue;
      const std::vector<Interval> at = {{s.start_ns, s.end_ns}};
      const double sm = samples.Over(device, sms, at).mean;
      const double is = trace.str(issue).empty() ? 0 : samples.Over(device, issue, at).mean;
      if (std::isnan(sm) || sm > kMaxSmsActive || std::isnan(is) || is > kMaxSmIssue) continue;
      ++n;
      gr_sum += s.value;
      sms_sum += sm;
      issue_sum += is;
      AppendToUnion(phases, s.start_ns, s.end_ns);
    }
    const DurationNs empty_ns = TotalLength(phases);
    if (n < kEmptyMinSamples ||
        static_cast<double>(empty_ns) < kEmptyMinShareOfBusy * static_cast<double>(busy_ns)) {
      continue;
    }
    // The kernels of those stretches: by time inside them, with their launches and grids.
    struct Kern {
      DurationNs ns = 0;
      int64_t launches = 0;
      int64_t max_blocks = 0;
    };
    std::map<std::string_view, Kern> kernels;
    const KernelTable& k = trace.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.device[i] != device) continue;
      const DurationNs inside = BusyWithin(phases, k.start_ns[i], k.end_ns[i]);
      if (inside <= 0) continue;
      Kern& x = kernels[trace.str(k.short_name[i])];
      x.ns += inside;
      ++x.launches;
      x.max_blocks = std::max(x.max_blocks, k.grid[i].Count());
    }
    std::vector<std::pair<std::string_view, Kern>> top(kernels.begin(), kernels.end());
    std::sort(top.begin(), top.end(),
              [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
    std::string listed;
    int64_t launches = 0;
    for (const auto& [name, x] : top) launches += x.launches;
    for (size_t j = 0; j < std::min<size_t>(3, top.size()); ++j) {
      listed += fmt::format(
          "{}{} ({}, {} launches, grid up to {} blocks)", listed.empty() ? "" : ", ", top[j].first,
          FormatDuration(top[j].second.ns), top[j].second.launches, top[j].second.max_blocks);
    }
    const double share = static_cast<double>(empty_ns) / static_cast<double>(busy_ns);
    Finding f;
    f.id = "busy_but_empty";
    f.severity = share >= 0.5 ? Severity::kMedium : Severity::kLow;
    f.title = fmt::format(
        "GPU {} is busy but its SMs are nearly empty for {} ({} of its busy time): GR Active "
        "{:.0f}% while SMs Active is {:.1f}% and SM Issue {:.1f}%",
        device, FormatDuration(empty_ns), Percent(share, 1.0), gr_sum / n, sms_sum / n,
        issue_sum / n);
    f.evidence.push_back({"empty_ns", "Busy-but-empty time", empty_ns, Unit::kDurationNs});
    f.evidence.push_back({"share_pct", "Of busy time", 100.0 * share, Unit::kPercent});
    f.evidence.push_back({"gr_active_pct", "GR Active", gr_sum / n, Unit::kPercent});
    f.evidence.push_back({"sms_active_pct", "SMs Active", sms_sum / n, Unit::kPercent});
    f.evidence.push_back({"sm_issue_pct", "SM Issue", issue_sum / n, Unit::kPercent});
    f.evidence.push_back({"samples", "Samples", n, Unit::kCount});
    f.evidence.push_back({"launches", "Kernel launches then", launches, Unit::kCount});
    f.evidence.push_back({"kernels", "Kernels then", listed});
    f.where = fmt::format("device {}: {}", device, listed);
    f.recommendation =
        "The GPU spends this time on work too small to fill it: launch overhead and one- or "
        "few-block grids. Capture the loop in a CUDA graph (torch.compile "
        "mode=\"reduce-overhead\", "
        "TensorRT-LLM's and vLLM's CUDA graphs), fuse chains of small kernels, batch more work per "
        "launch, and give kernels at least SMs x resident-blocks blocks (see launch_bound and "
        "small_grid for the same stretches seen from the trace).";
    f.estimated_savings_ns = 0;  // launch_bound and small_grid carry the time estimates
    for (const Interval& iv : phases) f.AddSpan(iv.start_ns, iv.end_ns, device);
    f.SortSpans();
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
