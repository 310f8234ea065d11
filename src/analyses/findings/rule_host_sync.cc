// Rule host_sync: the host blocks inside the iteration loop — synchronize calls, synchronous
// (blocking) copies and sets, and async copies from pageable memory, which the driver stages
// synchronously (the checks `nsys analyze` makes: cuda_api_sync, cuda_memcpy_sync,
// cuda_memcpy_async with pageable memory). docs/analyses/findings.md, "host_sync".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/findings/findings.h"

namespace sightline {
namespace {

enum Kind { kSync, kBlockingCopy, kPageableAsync, kNumKinds };

constexpr DurationNs kMaxBubbleNs = 1'000'000;  // counted GPU idle after one call, at most

constexpr const char* kIds[kNumKinds] = {"sync_in_loop", "blocking_copy", "pageable_async_copy"};

struct KindStats {
  int64_t calls = 0;
  DurationNs host_blocked_ns = 0;  // summed call durations
  DurationNs bubble_ns = 0;        // GPU idle right after the calls (the estimate)
  std::map<std::string_view, int64_t> names;
  int64_t bytes = 0;
  std::vector<int64_t> windows;  // windows with at least one call (ascending)
  int64_t first_row = -1;
  std::vector<FindingSpan> spans;  // each call and the GPU idle right after it
};

}  // namespace

Status RuleHostSync(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  LoopFacts& loop = c.loop();
  if (loop.Windows().empty()) return Status::Ok();
  const auto& api = trace.api_calls;
  const auto& m = trace.memops;

  // API rows whose copy touches pageable host memory, and the bytes they move.
  std::vector<int64_t> pageable_bytes(api.size(), -1);
  for (size_t i = 0; i < m.size(); ++i) {
    const int32_t r = m.launch_call[i];
    if (r == kNoRow) continue;
    if (m.src_kind[i] == MemoryKind::kPageable || m.dst_kind[i] == MemoryKind::kPageable) {
      pageable_bytes[r] = std::max<int64_t>(pageable_bytes[r], 0) + m.size_bytes[i];
    }
  }

  KindStats stats[kNumKinds];
  TimeNs last_bubble_end = INT64_MIN;  // a bubble several calls precede counts once
  for (size_t r = 0; r < api.size(); ++r) {
    const ApiClass cls = api.api_class[r];
    if (cls != ApiClass::kSync && cls != ApiClass::kMemcpy && cls != ApiClass::kMemset) continue;
    Kind kind;
    if (cls == ApiClass::kSync) {
      kind = kSync;
    } else if (IsBlockingCall(trace, r)) {
      kind = kBlockingCopy;
    } else if (pageable_bytes[r] >= 0) {
      kind = kPageableAsync;
    } else {
      continue;
    }
    const int64_t w = loop.FindWindow(api.pid[r], api.start_ns[r]);
    if (w < 0) continue;
    KindStats& s = stats[kind];
    ++s.calls;
    s.host_blocked_ns += api.dur_ns(r);
    ++s.names[trace.str(api.name[r])];
    if (pageable_bytes[r] > 0) s.bytes += pageable_bytes[r];
    if (s.windows.empty() || s.windows.back() != w) s.windows.push_back(w);
    if (s.first_row < 0) s.first_row = static_cast<int64_t>(r);
    const TimeNs end = api.end_ns[r];
    // Past a millisecond the host was doing something else than reacting to the call.
    const DurationNs bubble =
        std::min(kMaxBubbleNs, IdleAfter(c.gpu().Busy(loop.Windows()[w].device), end));
    s.spans.push_back(
        {api.start_ns[r], end + std::max<DurationNs>(bubble, 0), loop.Windows()[w].device});
    if (bubble > 0 && end + bubble != last_bubble_end) {
      s.bubble_ns += bubble;
      last_bubble_end = end + bubble;
    }
  }

  const bool iters = loop.MainSet() != nullptr;
  const int64_t n = static_cast<int64_t>(loop.Windows().size());
  for (int kind = 0; kind < kNumKinds; ++kind) {
    const KindStats& s = stats[kind];
    if (s.calls == 0) continue;
    Finding f;
    f.id = kIds[kind];
    std::string names;
    for (const auto& [name, count] : s.names) {
      names += fmt::format("{}{} x{}", names.empty() ? "" : ", ", name, count);
    }
    const std::string scope =
        iters ? fmt::format("{} of {} iterations", s.windows.size(), n) : "the trace";
    switch (kind) {
      case kSync:
        f.title = fmt::format("Host synchronization {}: {} synchronize calls in {}",
                              iters ? "inside the loop" : "(no iterations found)", s.calls, scope);
        f.recommendation =
            "Remove the synchronize from the loop: keep values on the GPU instead of reading them "
            "back (.item(), .cpu(), .tolist(), printing tensors), defer the read to the end of the "
            "step or overlap it (copy to pinned memory with non_blocking=True and wait on an "
            "event later), so the host keeps launching ahead of the GPU.";
        break;
      case kBlockingCopy:
        f.title = fmt::format(
            "Blocking copies inside the loop: {} synchronous memcpy/memset "
            "calls in {}",
            s.calls, scope);
        f.recommendation =
            "Use cudaMemcpyAsync/cudaMemsetAsync on the work stream with pinned host buffers "
            "(tensor.to(device, non_blocking=True) from pin_memory() tensors) and synchronize "
            "only where the result is needed.";
        break;
      default:
        f.title = fmt::format("Async copies from pageable memory: {} calls in {}", s.calls, scope);
        f.recommendation =
            "Allocate the host side of these copies in pinned memory (cudaHostAlloc / "
            "cudaHostRegister, tensor.pin_memory(), pin_memory=True in data loaders): from "
            "pageable memory the driver stages the copy and the call blocks the host.";
        break;
    }
    const DurationNs loop_ns = loop.Windows().back().end_ns - loop.Windows().front().start_ns;
    f.severity = s.bubble_ns >= 0.05 * loop_ns   ? Severity::kHigh
                 : s.bubble_ns >= 0.01 * loop_ns ? Severity::kMedium
                                                 : Severity::kLow;
    f.evidence.push_back({"calls", "Calls", s.calls, Unit::kCount});
    if (iters) {
      f.evidence.push_back({"iterations_with_calls", "Iterations with such calls",
                            static_cast<int64_t>(s.windows.size()), Unit::kCount});
      f.evidence.push_back({"calls_per_iteration", "Calls per iteration",
                            static_cast<double>(s.calls) / n, Unit::kNumber});
    }
    f.evidence.push_back(
        {"host_blocked_ns", "Host time in the calls", s.host_blocked_ns, Unit::kDurationNs});
    f.evidence.push_back(
        {"gpu_idle_after_ns", "GPU idle right after the calls", s.bubble_ns, Unit::kDurationNs});
    if (s.bytes > 0) {
      f.evidence.push_back({"pageable_bytes", "Bytes copied", s.bytes, Unit::kBytes});
    }
    f.evidence.push_back({"apis", "APIs", names, Unit::kText});
    const int64_t w0 = s.windows.front();
    f.where = fmt::format(
        "{} (first: {} at {} in {}, thread {}:{})",
        iters
            ? fmt::format("iterations {}..{} of '{}'", loop.Windows()[s.windows.front()].iteration,
                          loop.Windows()[s.windows.back()].iteration, loop.MainSet()->pattern)
            : std::string("whole trace"),
        trace.str(api.name[s.first_row]),
        FormatDuration(api.start_ns[s.first_row] - trace.begin_ns()),
        loop.WindowLabel(loop.Windows()[w0]), api.pid[s.first_row], api.tid[s.first_row]);
    f.estimated_savings_ns = s.bubble_ns;
    for (const FindingSpan& span : s.spans) f.AddSpan(span.start_ns, span.end_ns, span.device);
    f.SortSpans();
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
