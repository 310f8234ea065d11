// Rule host_bound_pipeline: in a typical iteration the GPU waits for the host — before the step's
// first work, after its last, or in a stall longer than a launch gap — while the launching thread
// is outside CUDA calls (running Python, waiting for the GIL, handling responses).
// docs/analyses/findings.md, "host_bound_pipeline".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/findings/findings.h"
#include "analyses/threads/threads.h"
#include "base/stats.h"

namespace sightline {
namespace {

constexpr double kHostBoundMinShare = 0.25;     // of the median iteration
constexpr DurationNs kMinHostIdleNs = 100'000;  // 100 us per typical iteration
constexpr double kHostBoundHighShare = 0.5;

}  // namespace

Status RuleHostBoundPipeline(AnalysisContext& c, std::vector<Finding>& out) {
  const IterationSet* set = c.loop().MainSet();
  if (set == nullptr || set->iterations.size() < 3) return Status::Ok();
  const Trace& trace = c.trace();
  const int32_t pid = set->pid, tid = set->tid;
  const std::vector<LoopWindow>& windows = c.loop().Windows();
  // Each window's host stalls: idle gaps longer than launch_bound's, and the idle before the first
  // and after the last GPU work (launch gaps are launch_bound's).
  std::vector<std::vector<Interval>> stalls(windows.size());
  std::vector<Interval> all_stalls;
  for (size_t wi = 0; wi < windows.size(); ++wi) {
    const LoopWindow& w = windows[wi];
    if (w.it == nullptr) continue;
    for (const Interval& g : GapsWithin(c.gpu().Busy(w.device), w.start_ns, w.end_ns)) {
      const bool edge = g.start_ns == w.start_ns || g.end_ns == w.end_ns;
      if (edge || g.end_ns - g.start_ns > kMaxLaunchGapNs) stalls[wi].push_back(g);
    }
    all_stalls.insert(all_stalls.end(), stalls[wi].begin(), stalls[wi].end());
  }
  all_stalls = MergeIntervals(std::move(all_stalls));
  // The launching thread's CUDA calls: GPU idle inside them is launch overhead (launch_bound).
  // Only the calls that meet a stall can change a stall minus their union, so only they are
  // merged: the union of every call would hold one interval per launch (10^7 in large traces).
  std::vector<Interval> cuda;
  const ApiCallTable& api = trace.api_calls;
  size_t s = 0;  // the first stall ending after the current call's start (calls come by start)
  for (size_t i = 0; i < api.size() && s < all_stalls.size(); ++i) {
    if (api.pid[i] != pid || api.tid[i] != tid) continue;
    while (s < all_stalls.size() && all_stalls[s].end_ns <= api.start_ns[i]) ++s;
    if (s < all_stalls.size() && all_stalls[s].start_ns < api.end_ns[i]) {
      AppendToUnion(cuda, api.start_ns[i], api.end_ns[i]);
    }
  }
  const std::vector<Interval>& gc = c.host().GcIntervals(pid);
  const std::vector<Interval>& os_wait = c.host().Waits(pid, tid).os_wait;
  const std::vector<Interval>& gil_wait = c.host().GilWaited(pid, tid);

  std::vector<int64_t> host_idle, walls;
  DurationNs total_host = 0, total_gc = 0, total_os = 0, total_gil = 0;
  std::vector<Interval> all_host_idle;  // the non-outlier iterations' host-bound idle
  for (size_t wi = 0; wi < windows.size(); ++wi) {
    const LoopWindow& w = windows[wi];
    if (w.it == nullptr) continue;
    std::vector<Interval> idle = SubtractIntervals(stalls[wi], cuda);
    const DurationNs h = TotalLength(idle);
    host_idle.push_back(h);
    walls.push_back(w.end_ns - w.start_ns);
    if (w.it->outlier) continue;  // outliers are the outlier rule's
    total_host += h;
    total_gc += IntersectionLength(idle, gc);
    total_os += IntersectionLength(idle, os_wait);
    total_gil += IntersectionLength(idle, gil_wait);
    all_host_idle.insert(all_host_idle.end(), idle.begin(), idle.end());
  }
  if (host_idle.empty()) return Status::Ok();
  const double median_host = Median(host_idle), median_wall = Median(walls);
  if (median_wall <= 0 || median_host < kMinHostIdleNs) return Status::Ok();
  const double share = median_host / median_wall;
  if (share < kHostBoundMinShare) return Status::Ok();

  // What ran meanwhile: NVTX ranges of the process (any thread, innermost first) overlapping the
  // host-bound idle of typical iterations; iteration ranges themselves do not name anything.
  std::map<std::pair<StringId, int32_t>, DurationNs> overlap;  // (name, tid)
  const RangeTable& r = trace.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.pid[i] != pid || static_cast<int32_t>(i) == kNoRow) continue;
    bool is_iteration = false;
    for (const Iteration& it : set->iterations) {
      if (it.range_row == static_cast<int32_t>(i)) {
        is_iteration = true;
        break;
      }
    }
    if (is_iteration) continue;
    const DurationNs t = BusyWithin(all_host_idle, r.start_ns[i], r.end_ns[i]);
    if (t > 0) overlap[{r.name[i], r.tid[i]}] += t;
  }
  std::vector<std::pair<DurationNs, std::pair<StringId, int32_t>>> named;
  for (const auto& [key, t] : overlap) named.push_back({t, key});
  std::stable_sort(named.begin(), named.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string ranges;
  for (size_t i = 0; i < std::min<size_t>(3, named.size()); ++i) {
    ranges +=
        fmt::format("{}{} on thread {}{} ({})", i ? ", " : "", trace.str(named[i].second.first),
                    named[i].second.second, named[i].second.second == tid ? " (launching)" : "",
                    FormatDuration(named[i].first));
  }
  std::string frames;
  if (trace.py_samples.size() > 0) frames = HotFrames(trace, pid, tid, all_host_idle, 3);
  const DurationNs own = std::max<DurationNs>(0, total_host - total_gc - total_os - total_gil);

  Finding f;
  f.id = "host_bound_pipeline";
  f.severity = share >= kHostBoundHighShare ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "The GPU waits for the host in a typical iteration: {} of {} ({}) with the launching thread "
      "outside CUDA calls{}",
      FormatDuration(static_cast<DurationNs>(median_host)),
      FormatDuration(static_cast<DurationNs>(median_wall)), Percent(share, 1.0),
      total_gil > own ? ", most of it waiting for the GIL" : "");
  f.evidence.push_back({"median_host_idle_ns", "Host-bound GPU idle, median iteration",
                        static_cast<int64_t>(median_host), Unit::kDurationNs});
  f.evidence.push_back(
      {"median_wall_ns", "Median iteration", static_cast<int64_t>(median_wall), Unit::kDurationNs});
  f.evidence.push_back({"host_idle_ns", "Host-bound GPU idle, all non-outlier iterations",
                        total_host, Unit::kDurationNs});
  f.evidence.push_back(
      {"gil_wait_ns", "of it: launching thread waiting for the GIL", total_gil, Unit::kDurationNs});
  f.evidence.push_back({"gc_ns", "of it: garbage collection", total_gc, Unit::kDurationNs});
  f.evidence.push_back({"os_wait_ns", "of it: OS waits", total_os, Unit::kDurationNs});
  f.evidence.push_back({"own_host_ns", "of it: the loop's own host code", own, Unit::kDurationNs});
  if (!ranges.empty()) f.evidence.push_back({"ranges", "NVTX ranges meanwhile", ranges});
  if (!frames.empty())
    f.evidence.push_back({"hot_frames", "Launching thread's hot frames", frames});
  f.where = fmt::format("iterations of '{}' (thread {}:{})", set->pattern, pid, tid);
  f.recommendation =
      "Take host work off the loop's critical path: hand responses to the client every N "
      "iterations instead of each (TensorRT-LLM's stream interval), detokenize and serialize in "
      "another process, prepare the next step's inputs while the GPU runs the current one "
      "(overlap scheduling), and capture the step in a CUDA graph so the GPU has a whole "
      "iteration queued.";
  // The loop's own host code while the GPU idles; GC, OS waits and GIL waits are estimated by
  // gc_pauses, blocking_os_call and gil_contention.
  f.estimated_savings_ns = own;
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
