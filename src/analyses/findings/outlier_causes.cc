#include "analyses/findings/outlier_causes.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analyses/threads/threads.h"
#include "facts/intervals.h"
#include "facts/launch_projection.h"

namespace sightline {
namespace {

// Kernel time per short name launched from `thread` in [a, b).
std::unordered_map<StringId, DurationNs> KernelTimeByName(const Trace& trace,
                                                          const LaunchIndex& index, int32_t thread,
                                                          TimeNs a, TimeNs b) {
  std::unordered_map<StringId, DurationNs> out;
  if (thread < 0) return out;
  for (uint32_t work : index.LaunchedIn(thread, a, b)) {
    if (index.IsKernel(work)) out[trace.kernels.short_name[work]] += trace.kernels.dur_ns(work);
  }
  return out;
}

}  // namespace

std::string GrownKernels(AnalysisContext& c, const IterationSet& set, const Iteration& typical,
                         const Iteration& worst) {
  const Trace& trace = c.trace();
  const LaunchIndex& index = c.host().Launches();
  const int32_t thread = index.ThreadOf(set.pid, set.tid);
  auto before = KernelTimeByName(trace, index, thread, typical.start_ns, typical.end_ns);
  auto after = KernelTimeByName(trace, index, thread, worst.start_ns, worst.end_ns);
  std::vector<std::pair<DurationNs, StringId>> grew;
  for (const auto& [name, t] : after) {
    auto b = before.find(name);
    const DurationNs d = t - (b == before.end() ? 0 : b->second);
    if (d > 0) grew.push_back({d, name});
  }
  std::sort(grew.begin(), grew.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string grown;
  for (size_t i = 0; i < std::min<size_t>(3, grew.size()); ++i) {
    grown +=
        fmt::format("{}{} +{}{}", i ? ", " : "", trace.str(grew[i].second),
                    FormatDuration(grew[i].first), before.count(grew[i].second) ? "" : " (new)");
  }
  return grown;
}

OutlierCauses MeasureOutlierCauses(AnalysisContext& c, const IterationSet& set,
                                   const Iteration& typical,
                                   const std::vector<const Iteration*>& outliers,
                                   DurationNs excess_ns) {
  // Measured causes over all outliers, each against the typical iteration (docs/metrics.md, "Host
  // waits"): garbage collection (the GC ranges of the loop's process), the launching thread's GIL
  // wait and OS waits, host-blocking CUDA calls (synchronize, blocking copies), and kernel time.
  // What they do not cover is left "unexplained", with its size.
  const Trace& trace = c.trace();
  const HostBreakdown base =
      c.host().HostWithin(set.pid, set.tid, typical.start_ns, typical.end_ns);
  DurationNs gc_excess = 0, sync_excess = 0, gil_excess = 0, os_excess = 0, kernel_excess = 0;
  std::vector<Interval> outlier_spans;
  for (const Iteration* it : outliers) {
    const HostBreakdown h = c.host().HostWithin(set.pid, set.tid, it->start_ns, it->end_ns);
    gc_excess += std::max<DurationNs>(0, h.gc_ns - base.gc_ns);
    sync_excess += std::max<DurationNs>(0, h.sync_ns - base.sync_ns);
    gil_excess += std::max<DurationNs>(0, h.gil_wait_ns - base.gil_wait_ns);
    os_excess += std::max<DurationNs>(0, h.os_wait_ns - base.os_wait_ns);
    kernel_excess +=
        std::max<DurationNs>(0, it->launched.kernel_time_ns - typical.launched.kernel_time_ns);
    outlier_spans.push_back({it->start_ns, it->end_ns});
  }
  OutlierCauses r;
  r.excess_ns = excess_ns;
  r.causes = {
      {"gc_excess_ns", "Extra garbage collection in the outliers", "of garbage collection", "GC",
       gc_excess},
      {"gil_excess_ns", "Extra GIL wait of the launching thread",
       "of the launching thread waiting for the GIL", "GIL wait", gil_excess},
      {"os_wait_excess_ns", "Extra OS waits of the launching thread",
       "of the launching thread waiting in OS calls", "OS waits", os_excess},
      {"sync_excess_ns", "Extra host-blocking calls in the outliers",
       "more of the host blocked in synchronize and blocking copy calls", "blocking CUDA calls",
       sync_excess},
      {"kernel_excess_ns", "Extra kernel time in the outliers", "more kernel time", "kernel time",
       kernel_excess},
  };
  DurationNs explained = 0;
  for (const OutlierCause& x : r.causes) explained += x.ns;
  r.unexplained_ns = std::max<DurationNs>(0, excess_ns - explained);
  for (size_t i = 0; i < r.causes.size(); ++i) {
    if (r.causes[i].ns > r.causes[r.top].ns) r.top = i;
  }
  for (const OutlierCause& x : r.causes) {
    if (x.ns <= 0) continue;
    r.attribution += fmt::format("{}{} {} ({:.0f}%)", r.attribution.empty() ? "" : ", ",
                                 x.short_name, FormatDuration(x.ns), 100 * r.Share(x.ns));
  }
  r.attribution += fmt::format("{}unexplained {} ({:.0f}%)", r.attribution.empty() ? "" : "; ",
                               FormatDuration(r.unexplained_ns), 100 * r.Share(r.unexplained_ns));
  if (trace.py_samples.size() > 0) {
    // The samples of the unexplained part: the outliers minus the measured waits.
    std::vector<Interval> measured = c.host().GcIntervals(set.pid);
    const std::vector<Interval>& gil = c.host().GilWaited(set.pid, set.tid);
    const std::vector<Interval>& os = c.host().Waits(set.pid, set.tid).os_wait;
    measured.insert(measured.end(), gil.begin(), gil.end());
    measured.insert(measured.end(), os.begin(), os.end());
    r.hot_frames = HotFrames(
        trace, set.pid, set.tid,
        SubtractIntervals(MergeIntervals(outlier_spans), MergeIntervals(std::move(measured))), 3);
  }
  return r;
}

}  // namespace sightline
