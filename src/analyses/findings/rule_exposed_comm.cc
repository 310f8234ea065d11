// Rule exposed_comm: communication kernels (NCCL and custom collectives) that run while no compute
// kernel runs on the same device — communication not overlapped with computation.
// docs/analyses/findings.md, "exposed_comm".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/common/analysis_context.h"
#include "analyses/findings/findings.h"

namespace sightline {
namespace {

constexpr double kMinExposedShare = 0.05;  // of the device's active span

// Per device: which collectives and streams the exposed time belongs to (per kernel: its time
// outside the compute union; overlapping collectives each count here, the totals do not).
struct ExposedParts {
  std::map<std::string_view, DurationNs> by_name;
  std::map<int32_t, DurationNs> by_stream;
  std::vector<FindingSpan> kernels;  // collectives with exposed time (annotations)
};

}  // namespace

Status RuleExposedComm(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  if (!c.kernels().HasCommunication()) return Status::Ok();
  const auto& k = trace.kernels;
  std::map<int32_t, ExposedParts> parts;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.device[i] < 0 || !c.kernels().IsCommunication(k.name[i])) continue;
    const DurationNs exposed =
        k.dur_ns(i) - BusyWithin(c.kernels().Comm(k.device[i]).compute, k.start_ns[i], k.end_ns[i]);
    if (exposed <= 0) continue;
    ExposedParts& p = parts[k.device[i]];
    p.by_name[trace.str(k.short_name[i])] += exposed;
    p.by_stream[k.stream[i]] += exposed;
    p.kernels.push_back({k.start_ns[i], k.end_ns[i], k.device[i]});
  }

  for (int32_t device : c.gpu().GpuDevices()) {
    const CommSplit& d = c.kernels().Comm(device);
    const std::vector<Interval>& busy = c.gpu().Busy(device);
    if (d.comm_kernels == 0) continue;
    const DurationNs span = busy.back().end_ns - busy.front().start_ns;
    const DurationNs exposed = d.exposed_ns();
    if (exposed <= 0 || exposed < kMinExposedShare * span) continue;
    const ExposedParts& p = parts[device];
    auto top = std::max_element(p.by_name.begin(), p.by_name.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    std::string streams;
    for (const auto& [stream, ns] : p.by_stream) {
      streams += fmt::format("{}{} ({})", streams.empty() ? "" : ", ", stream, FormatDuration(ns));
    }
    Finding f;
    f.id = "exposed_comm";
    f.severity = exposed >= 0.2 * span ? Severity::kHigh : Severity::kMedium;
    f.title = fmt::format(
        "Communication not overlapped with compute on device {}: {} of {} collective time runs "
        "alone",
        device, Percent(exposed, d.comm_ns), FormatDuration(d.comm_ns));
    f.evidence.push_back({"comm_kernels", "Communication kernels", d.comm_kernels, Unit::kCount});
    f.evidence.push_back({"comm_ns", "Communication time", d.comm_ns, Unit::kDurationNs});
    f.evidence.push_back({"exposed_ns", "Not overlapped with compute", exposed, Unit::kDurationNs});
    f.evidence.push_back({"exposed_pct_of_span", "Share of the device's active span",
                          span > 0 ? 100.0 * exposed / span : 0.0, Unit::kPercent});
    if (top != p.by_name.end()) {
      f.evidence.push_back({"top_kernel", "Most exposed kernel",
                            fmt::format("{} ({})", top->first, FormatDuration(top->second))});
    }
    f.where = fmt::format("device {}, streams {}{}", device, streams,
                          c.loop().MainSet() != nullptr
                              ? fmt::format(", in iterations of '{}'", c.loop().MainSet()->pattern)
                              : std::string());
    f.recommendation =
        "Overlap collectives with independent compute: run them on a separate stream and "
        "start the next layer's or micro-batch's work meanwhile (DDP/FSDP bucketing and "
        "prefetch, async tensor parallelism, chunked GEMM+all-reduce), or shrink them: a fused "
        "all-reduce + residual + RMSNorm, a one-shot/two-shot custom all-reduce for small "
        "messages (TensorRT-LLM/vLLM custom all-reduce), or lower-precision communication.";
    // Upper bound: collectives that depend on the compute before them (TP all-reduce between
    // layers) only hide behind other work once the schedule provides it.
    f.estimated_savings_ns = exposed;
    for (const FindingSpan& s : p.kernels) f.AddSpan(s.start_ns, s.end_ns, s.device);
    f.SortSpans();
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
