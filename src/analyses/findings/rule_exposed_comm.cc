// Rule exposed_comm: communication kernels (NCCL and custom collectives) that run while no compute
// kernel runs on the same device — communication not overlapped with computation.
// docs/analyses/findings.md, "exposed_comm".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/findings/findings.h"
#include "analyses/kernel_category.h"

namespace sightline {
namespace {

constexpr double kMinExposedShare = 0.05;  // of the device's active span

struct DeviceComm {
  std::vector<Interval> compute;  // merged compute-kernel intervals
  DurationNs comm_ns = 0, exposed_ns = 0;
  int64_t comm_kernels = 0;
  std::map<std::string_view, DurationNs> exposed_by_name;
  std::map<int32_t, DurationNs> exposed_by_stream;
  std::vector<FindingSpan> exposed_kernels;  // collectives with exposed time (annotations)
};

}  // namespace

Status RuleExposedComm(const Trace& trace, const FindingsContext& c, std::vector<Finding>& out) {
  const auto& k = trace.kernels;
  // Category per distinct name (-1 not yet classified), indexed by StringId.
  std::vector<int8_t> is_comm(trace.strings.size(), -1);
  std::vector<uint8_t> comm(k.size());
  bool any = false;
  for (size_t i = 0; i < k.size(); ++i) {
    int8_t& cat = is_comm[k.name[i].value];
    if (cat < 0) cat = ClassifyKernel(trace.str(k.name[i])) == KernelCategory::kCommunication;
    comm[i] = cat;
    any |= cat != 0;
  }
  if (!any) return Status::Ok();

  // Per device id (the context's busy vector spans every device with work).
  std::vector<DeviceComm> by_device(c.busy.size());
  // Compute intervals per device, merged on the fly (the table is sorted by start).
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.device[i] < 0) comm[i] = 2;  // unknown device: neither side
    if (comm[i]) continue;
    std::vector<Interval>& v = by_device[k.device[i]].compute;
    if (!v.empty() && k.start_ns[i] <= v.back().end_ns) {
      v.back().end_ns = std::max(v.back().end_ns, k.end_ns[i]);
    } else {
      v.push_back({k.start_ns[i], k.end_ns[i]});
    }
  }
  for (size_t i = 0; i < k.size(); ++i) {
    if (comm[i] != 1) continue;
    DeviceComm& d = by_device[k.device[i]];
    const DurationNs exposed = k.dur_ns(i) - BusyWithin(d.compute, k.start_ns[i], k.end_ns[i]);
    ++d.comm_kernels;
    d.comm_ns += k.dur_ns(i);
    d.exposed_ns += exposed;
    if (exposed > 0) {
      d.exposed_by_name[trace.str(k.short_name[i])] += exposed;
      d.exposed_by_stream[k.stream[i]] += exposed;
      d.exposed_kernels.push_back({k.start_ns[i], k.end_ns[i], k.device[i]});
    }
  }

  for (int32_t device = 0; device < static_cast<int32_t>(by_device.size()); ++device) {
    const DeviceComm& d = by_device[device];
    const std::vector<Interval>& busy = c.Busy(device);
    if (busy.empty() || d.comm_kernels == 0) continue;
    const DurationNs span = busy.back().end_ns - busy.front().start_ns;
    if (d.exposed_ns < kMinExposedShare * span) continue;
    auto top = std::max_element(d.exposed_by_name.begin(), d.exposed_by_name.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    std::string streams;
    for (const auto& [stream, ns] : d.exposed_by_stream) {
      streams += fmt::format("{}{} ({})", streams.empty() ? "" : ", ", stream, FormatDuration(ns));
    }
    Finding f;
    f.id = "exposed_comm";
    f.severity = d.exposed_ns >= 0.2 * span ? Severity::kHigh : Severity::kMedium;
    f.title = fmt::format(
        "Communication not overlapped with compute on device {}: {} of {} collective time runs "
        "alone",
        device, Percent(d.exposed_ns, d.comm_ns), FormatDuration(d.comm_ns));
    f.evidence.push_back({"comm_kernels", "Communication kernels", d.comm_kernels, Unit::kCount});
    f.evidence.push_back({"comm_ns", "Communication time", d.comm_ns, Unit::kDurationNs});
    f.evidence.push_back(
        {"exposed_ns", "Not overlapped with compute", d.exposed_ns, Unit::kDurationNs});
    f.evidence.push_back({"exposed_pct_of_span", "Share of the device's active span",
                          span > 0 ? 100.0 * d.exposed_ns / span : 0.0, Unit::kPercent});
    if (top != d.exposed_by_name.end()) {
      f.evidence.push_back({"top_kernel", "Most exposed kernel",
                            fmt::format("{} ({})", top->first, FormatDuration(top->second))});
    }
    f.where = fmt::format("device {}, streams {}{}", device, streams,
                          c.main_set != nullptr
                              ? fmt::format(", in iterations of '{}'", c.main_set->pattern)
                              : std::string());
    f.recommendation =
        "Overlap collectives with independent compute: run them on a separate stream and "
        "start the next layer's or micro-batch's work meanwhile (DDP/FSDP bucketing and "
        "prefetch, async tensor parallelism, chunked GEMM+all-reduce), or shrink them: a fused "
        "all-reduce + residual + RMSNorm, a one-shot/two-shot custom all-reduce for small "
        "messages (TensorRT-LLM/vLLM custom all-reduce), or lower-precision communication.";
    // Upper bound: collectives that depend on the compute before them (TP all-reduce between
    // layers) only hide behind other work once the schedule provides it.
    f.estimated_savings_ns = d.exposed_ns;
    for (const FindingSpan& s : d.exposed_kernels) f.AddSpan(s.start_ns, s.end_ns, s.device);
    f.SortSpans();
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
