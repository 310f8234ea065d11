#include "analyses/threads/iteration_timelines.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "facts/intervals.h"

namespace sightline {
namespace {

constexpr size_t kMaxSpansPerLane = 4000;
constexpr size_t kOtherThreadLanes = 4;

// The parts of disjoint sorted `v` inside [a, b) as spans of `kind`.
void AddClipped(TimelineLane& lane, const std::vector<Interval>& v, TimeNs a, TimeNs b,
                const char* kind, const std::string& label) {
  auto it = std::lower_bound(v.begin(), v.end(), a,
                             [](const Interval& iv, TimeNs t) { return iv.end_ns <= t; });
  for (; it != v.end() && it->start_ns < b && lane.spans.size() < kMaxSpansPerLane; ++it) {
    lane.spans.push_back({std::max(it->start_ns, a), std::min(it->end_ns, b), kind, label});
  }
}

std::string ThreadLabel(const Trace& trace, int32_t pid, int32_t tid) {
  for (const ThreadInfo& t : trace.threads) {
    if (t.pid == pid && t.tid == tid && !t.name.empty()) {
      return fmt::format("thread {} ({})", tid, t.name);
    }
  }
  return fmt::format("thread {}", tid);
}

// Thread (pid, tid)'s ranges starting in [a, b), but the iteration's own range `own_range`.
void AddRanges(const Trace& trace, int32_t pid, int32_t tid, TimeNs a, TimeNs b, int32_t own_range,
               TimelineLane& lane) {
  const RangeTable& rg = trace.ranges;
  for (size_t i = static_cast<size_t>(std::lower_bound(rg.start_ns.begin(), rg.start_ns.end(), a) -
                                      rg.start_ns.begin());
       i < rg.size() && rg.start_ns[i] < b && lane.spans.size() < kMaxSpansPerLane; ++i) {
    if (rg.pid[i] != pid || rg.tid[i] != tid || static_cast<int32_t>(i) == own_range) continue;
    lane.spans.push_back(
        {rg.start_ns[i], std::min(rg.end_ns[i], b), "nvtx", std::string(trace.str(rg.name[i]))});
  }
}

// Thread (pid, tid)'s CUDA calls starting in [a, b).
void AddCudaCalls(const Trace& trace, int32_t pid, int32_t tid, TimeNs a, TimeNs b,
                  TimelineLane& lane) {
  const ApiCallTable& calls = trace.api_calls;
  for (size_t i =
           static_cast<size_t>(std::lower_bound(calls.start_ns.begin(), calls.start_ns.end(), a) -
                               calls.start_ns.begin());
       i < calls.size() && calls.start_ns[i] < b && lane.spans.size() < kMaxSpansPerLane; ++i) {
    if (calls.pid[i] != pid || calls.tid[i] != tid) continue;
    lane.spans.push_back({calls.start_ns[i], std::min(calls.end_ns[i], b), "cuda_api",
                          std::string(trace.str(calls.name[i]))});
  }
}

// The other threads of the launching thread's process that held the GIL longest in [a, b): their
// GIL and, when they have some, NVTX lanes.
void AddOtherGilThreads(AnalysisContext& context, const ThreadsResult& r, TimeNs a, TimeNs b,
                        int32_t own_range, Timeline& t) {
  std::vector<std::pair<DurationNs, std::pair<int32_t, int32_t>>> others;
  for (const auto& [p, th] : context.host().GilThreads()) {
    if (p != r.main_pid || th == r.main_tid) continue;
    const DurationNs held = BusyWithin(context.host().GilHeld(p, th), a, b);
    if (held > 0) others.push_back({held, {p, th}});
  }
  std::stable_sort(others.begin(), others.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  for (size_t k = 0; k < std::min(kOtherThreadLanes, others.size()); ++k) {
    const auto [p, th] = others[k].second;
    const std::string label = ThreadLabel(context.trace(), p, th);
    TimelineLane& gil = t.lanes.emplace_back();
    gil.label = label + ": GIL";
    AddClipped(gil, context.host().GilHeld(p, th), a, b, "gil_held", "holding the GIL");
    TimelineLane nvtx_lane;
    nvtx_lane.label = label + ": NVTX";
    AddRanges(context.trace(), p, th, a, b, own_range, nvtx_lane);
    if (!nvtx_lane.spans.empty()) t.lanes.push_back(std::move(nvtx_lane));
  }
}

// One iteration's timeline: the GPUs busy, then the launching thread's lanes, then the other
// threads that held the GIL.
void AddTimeline(AnalysisContext& context, const ThreadsResult& r, const IterationSet& set,
                 const Iteration& it, const char* key, const char* what, Section& s) {
  const Trace& trace = context.trace();
  const int32_t pid = r.main_pid, tid = r.main_tid;
  const std::string main = ThreadLabel(trace, pid, tid);
  const TimeNs a = it.start_ns, b = it.end_ns;
  Timeline& t = s.timelines.emplace_back();
  t.key = key;
  t.title = fmt::format("{}: {} ({}), {}", what, it.index, trace.str(it.name),
                        FormatDuration(it.wall_ns()));
  t.start_ns = a;
  t.end_ns = b;
  std::vector<int32_t> devices = set.devices;
  if (devices.empty()) devices = context.gpu().GpuDevices();
  for (int32_t d : devices) {
    TimelineLane& lane = t.lanes.emplace_back();
    lane.label = fmt::format("GPU {} busy", d);
    AddClipped(lane, context.gpu().Busy(d), a, b, "gpu", "GPU busy");
  }
  TimelineLane& api = t.lanes.emplace_back();
  api.label = main + ": CUDA calls";
  AddCudaCalls(trace, pid, tid, a, b, api);
  TimelineLane& nvtx = t.lanes.emplace_back();
  nvtx.label = main + ": NVTX";
  AddRanges(trace, pid, tid, a, b, it.range_row, nvtx);
  if (r.has_gil) {
    TimelineLane& gil = t.lanes.emplace_back();
    gil.label = main + ": GIL";
    AddClipped(gil, context.host().GilHeld(pid, tid), a, b, "gil_held", "holding the GIL");
    AddClipped(gil, context.host().GilWaited(pid, tid), a, b, "gil_wait", "waiting for the GIL");
  }
  if (r.has_os_calls) {
    TimelineLane& os = t.lanes.emplace_back();
    os.label = main + ": OS waits";
    AddClipped(os, context.host().Waits(pid, tid).os_wait, a, b, "os_wait",
               "waiting in an OS call");
  }
  if (r.has_gc) {
    TimelineLane& gc = t.lanes.emplace_back();
    gc.label = "garbage collection";
    AddClipped(gc, context.host().GcIntervals(pid), a, b, "gc", "garbage collection");
  }
  AddOtherGilThreads(context, r, a, b, it.range_row, t);
  t.note =
      "green: GPU busy; blue: CUDA calls; purple: NVTX ranges; orange: holding the GIL; red: "
      "waiting for it; brown: OS waits; black: garbage collection (hover for names)";
}

}  // namespace

void AddIterationTimelines(AnalysisContext& context, const ThreadsResult& r, Section& s) {
  const IterationSet* set = context.loop().MainSet();
  if (set == nullptr || set->iterations.size() < 2 || r.main_tid < 0) return;
  // The slowest, and the one closest to the median that is not an outlier.
  const Iteration* worst = &set->iterations[0];
  const Iteration* typical = nullptr;
  for (const Iteration& it : set->iterations) {
    if (it.wall_ns() > worst->wall_ns()) worst = &it;
    if (!it.outlier &&
        (typical == nullptr || std::abs(it.wall_ns() - set->wall.median) <
                                   std::abs(typical->wall_ns() - set->wall.median))) {
      typical = &it;
    }
  }
  if (typical == nullptr || typical == worst) return;
  AddTimeline(context, r, *set, *worst, "worst_iteration", "The slowest iteration", s);
  AddTimeline(context, r, *set, *typical, "typical_iteration", "A typical iteration", s);
}

}  // namespace sightline
