// Rule memory_bound_phase: stretches where the device is busy, DRAM bandwidth is near its peak and
// tensor cores are nearly idle: the work is bound by memory traffic (decode GEMVs, elementwise and
// normalization chains, attention over a long KV cache), from the sampled GPU metrics alone.
// docs/analyses/findings.md, "memory_bound_phase".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analyses/findings/findings.h"
#include "analyses/gpu_metrics/gpu_metrics_intervals.h"
#include "facts/metric_samples.h"

namespace sightline {
namespace {

constexpr double kMinDram = 60.0;                    // percent of peak, read + write
constexpr double kMaxTensor = 10.0;                  // percent
constexpr double kMinBusyShare = 0.5;                // of a sample's time, for it to count as busy
constexpr double kMemoryBoundMinShareOfBusy = 0.10;  // memory-bound time, of the device's busy time
constexpr int64_t kMemoryBoundMinSamples = 3;

}  // namespace

Status RuleMemoryBoundPhase(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  if (trace.counters.size() == 0) return Status::Ok();
  const std::vector<StringId> names = IntervalMetricNames(trace);
  const StringId read = FindMetric(names, trace, "DRAM Read"),
                 write = FindMetric(names, trace, "DRAM Write");
  const StringId tensor = FindMetric(names, trace, "Tensor Active");
  if (trace.str(read).empty() || trace.str(tensor).empty()) return Status::Ok();
  const MetricSamples& samples = c.samples();
  for (int32_t device : c.gpu().GpuDevices()) {
    const std::vector<Interval>& busy = c.gpu().Busy(device);
    const DurationNs busy_ns = TotalLength(busy);
    if (busy_ns <= 0) continue;
    std::vector<Interval> phases;
    int64_t n = 0;
    double dram_sum = 0, tensor_sum = 0;
    for (const MetricSamples::Step& s : samples.Steps(device, read)) {
      const DurationNs len = s.end_ns - s.start_ns;
      if (len <= 0) continue;
      if (static_cast<double>(BusyWithin(busy, s.start_ns, s.end_ns)) <
          kMinBusyShare * static_cast<double>(len)) {
        continue;
      }
      const std::vector<Interval> at = {{s.start_ns, s.end_ns}};
      const double w = trace.str(write).empty() ? 0 : samples.Over(device, write, at).mean;
      const double t = samples.Over(device, tensor, at).mean;
      const double dram = s.value + (std::isnan(w) ? 0 : w);
      if (dram < kMinDram || std::isnan(t) || t > kMaxTensor) continue;
      ++n;
      dram_sum += dram;
      tensor_sum += t;
      AppendToUnion(phases, s.start_ns, s.end_ns);
    }
    const DurationNs bound_ns = TotalLength(phases);
    if (n < kMemoryBoundMinSamples ||
        static_cast<double>(bound_ns) < kMemoryBoundMinShareOfBusy * static_cast<double>(busy_ns)) {
      continue;
    }
    // The kernels that ran in those phases, by time inside them.
    std::map<std::string_view, DurationNs> kernels;
    const KernelTable& k = trace.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.device[i] != device) continue;
      const DurationNs inside = BusyWithin(phases, k.start_ns[i], k.end_ns[i]);
      if (inside > 0) kernels[trace.str(k.short_name[i])] += inside;
    }
    std::vector<std::pair<DurationNs, std::string_view>> top;
    for (const auto& [name, ns] : kernels) top.push_back({ns, name});
    std::sort(top.begin(), top.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string listed;
    for (size_t j = 0; j < std::min<size_t>(3, top.size()); ++j) {
      listed += fmt::format("{}{} ({})", listed.empty() ? "" : ", ", top[j].second,
                            FormatDuration(top[j].first));
    }
    const double share = static_cast<double>(bound_ns) / static_cast<double>(busy_ns);
    Finding f;
    f.id = "memory_bound_phase";
    f.severity = share >= 0.5 ? Severity::kMedium : Severity::kLow;
    f.title = fmt::format(
        "GPU {} is memory-bound for {} ({} of its busy time): DRAM at {:.0f}% of peak while "
        "tensor cores are {:.0f}% active",
        device, FormatDuration(bound_ns), Percent(share, 1.0), dram_sum / n, tensor_sum / n);
    f.evidence.push_back({"bound_ns", "Memory-bound time", bound_ns, Unit::kDurationNs});
    f.evidence.push_back({"share_pct", "Of busy time", 100.0 * share, Unit::kPercent});
    f.evidence.push_back({"dram_pct", "DRAM read + write", dram_sum / n, Unit::kPercent});
    f.evidence.push_back({"tensor_pct", "Tensor Active", tensor_sum / n, Unit::kPercent});
    f.evidence.push_back({"samples", "Samples", n, Unit::kCount});
    f.evidence.push_back({"kernels", "Kernels then", listed});
    f.where = fmt::format("device {}: {}", device, listed);
    f.recommendation =
        "Cut the bytes moved per result: fuse elementwise and normalization chains "
        "(torch.compile, fused kernels), quantize weights and the KV cache (FP8/INT4), batch more "
        "requests per step so decode GEMVs become GEMMs, and use attention kernels that read the "
        "KV cache once; Nsight Compute's memory workload analysis (`sightline ncu`) confirms a "
        "kernel's memory bound.";
    f.estimated_savings_ns = 0;  // the fix changes the work, not idle time: no estimate
    for (const Interval& iv : phases) f.AddSpan(iv.start_ns, iv.end_ns, device);
    f.SortSpans();
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
