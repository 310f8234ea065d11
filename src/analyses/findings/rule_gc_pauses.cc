// Rule gc_pauses: Python garbage collection inside the loop, and the GPU idle time it caused.
// docs/analyses/findings.md, "gc_pauses".
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "analyses/findings/findings.h"

namespace sightline {
namespace {

constexpr double kGcMinShare = 0.02;        // of the loop's wall time
constexpr DurationNs kMinGcNs = 1'000'000;  // 1 ms in the loop
constexpr double kGcHighShare = 0.10;
constexpr size_t kGcListed = 8;

}  // namespace

Status RuleGcPauses(AnalysisContext& c, std::vector<Finding>& out) {
  if (c.host().GcIntervals(-1).empty()) return Status::Ok();
  DurationNs loop = 0, gc_in_loop = 0, idle_during_gc = 0, longest = 0;
  int64_t collections = 0;
  struct Hit {
    const LoopWindow* w;
    DurationNs gc_ns;
  };
  std::vector<Hit> hits;
  Finding f;
  for (const LoopWindow& w : c.loop().Windows()) {
    loop += w.end_ns - w.start_ns;
    const std::vector<Interval>& gc = c.host().GcIntervals(w.pid);
    const std::vector<Interval>& busy = c.gpu().Busy(w.device);
    DurationNs in_window = 0;
    auto it = std::lower_bound(gc.begin(), gc.end(), w.start_ns,
                               [](const Interval& iv, TimeNs t) { return iv.end_ns <= t; });
    for (; it != gc.end() && it->start_ns < w.end_ns; ++it) {
      const TimeNs a = std::max(it->start_ns, w.start_ns), b = std::min(it->end_ns, w.end_ns);
      if (b <= a) continue;
      ++collections;
      in_window += b - a;
      longest = std::max(longest, b - a);
      idle_during_gc += (b - a) - BusyWithin(busy, a, b);
      f.AddSpan(a, b, w.device);
    }
    if (in_window > 0) hits.push_back({&w, in_window});
    gc_in_loop += in_window;
  }
  if (loop <= 0 || gc_in_loop < kMinGcNs) return Status::Ok();
  const double share = static_cast<double>(gc_in_loop) / static_cast<double>(loop);
  if (share < kGcMinShare) return Status::Ok();

  f.id = "gc_pauses";
  f.severity = share >= kGcHighShare ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "Python garbage collection stops the loop: {} in {} collection{} ({} of the loop); the GPU "
      "sat idle {} of it",
      FormatDuration(gc_in_loop), collections, collections == 1 ? "" : "s", Percent(share, 1.0),
      FormatDuration(idle_during_gc));
  f.evidence.push_back({"collections", "Collections in the loop", collections, Unit::kCount});
  f.evidence.push_back({"gc_ns", "GC time in the loop", gc_in_loop, Unit::kDurationNs});
  f.evidence.push_back({"longest_ns", "Longest collection", longest, Unit::kDurationNs});
  f.evidence.push_back({"loop_ns", "Loop wall time", loop, Unit::kDurationNs});
  f.evidence.push_back({"gc_share_pct", "Share of the loop", 100.0 * share, Unit::kPercent});
  f.evidence.push_back(
      {"gpu_idle_during_gc_ns", "GPU idle during GC", idle_during_gc, Unit::kDurationNs});
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Hit& x, const Hit& y) { return x.gc_ns > y.gc_ns; });
  std::string list;
  for (size_t i = 0; i < std::min(kGcListed, hits.size()); ++i) {
    list += fmt::format("{}{} ({})", i ? ", " : "", c.loop().WindowLabel(*hits[i].w),
                        FormatDuration(hits[i].gc_ns));
  }
  if (hits.size() > kGcListed) list += fmt::format(", and {} more", hits.size() - kGcListed);
  f.where =
      fmt::format("GC ranges named {}: {}", fmt::join(c.options().gc_range_names, ", "), list);
  f.recommendation =
      "Keep the collector out of the loop: gc.freeze() after warm-up so long-lived objects leave "
      "the generations the collector scans (what TensorRT-LLM and vLLM do), raise the thresholds "
      "(gc.set_threshold) or gc.disable() in the loop and collect between requests; fewer "
      "short-lived Python objects per step, reference cycles above all, make each collection "
      "shorter.";
  // The GPU waited while the process collected: that idle time is what keeping GC out saves.
  f.estimated_savings_ns = idle_during_gc;
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
