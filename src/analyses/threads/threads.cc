#include "analyses/threads/threads.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "analyses/common/analysis_context.h"
#include "analyses/threads/os_call_chains.h"
#include "base/name_pattern.h"
#include "base/stats.h"
#include "facts/intervals.h"

namespace sightline {
namespace {

uint64_t Key(int32_t pid, int32_t tid) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
}

struct Acc {
  ThreadRow row;
  bool listed = false;  // in trace.threads (its role comes from there)
  std::map<std::string_view, DurationNs> ranges;
};

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

// The worst iteration beside a typical one, lane by lane: the GPUs, the launching thread's CUDA
// calls, NVTX ranges, GIL and OS waits, GC, and the other threads that held the GIL.
void AddIterationTimelines(AnalysisContext& context, const ThreadsResult& r, Section& s) {
  const IterationSet* set = context.MainSet();
  if (set == nullptr || set->iterations.size() < 2 || r.main_tid < 0) return;
  const Trace& trace = context.trace();
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
  auto thread_label = [&](int32_t pid, int32_t tid) {
    for (const ThreadInfo& t : trace.threads) {
      if (t.pid == pid && t.tid == tid && !t.name.empty()) {
        return fmt::format("thread {} ({})", tid, t.name);
      }
    }
    return fmt::format("thread {}", tid);
  };
  const int32_t pid = r.main_pid, tid = r.main_tid;
  const std::string main = thread_label(pid, tid);
  for (const auto& [it, key, what] :
       {std::tuple{worst, "worst_iteration", "The slowest iteration"},
        std::tuple{typical, "typical_iteration", "A typical iteration"}}) {
    const TimeNs a = it->start_ns, b = it->end_ns;
    Timeline& t = s.timelines.emplace_back();
    t.key = key;
    t.title = fmt::format("{}: {} ({}), {}", what, it->index, trace.str(it->name),
                          FormatDuration(it->wall_ns()));
    t.start_ns = a;
    t.end_ns = b;
    std::vector<int32_t> devices = set->devices;
    if (devices.empty()) devices = context.GpuDevices();
    for (int32_t d : devices) {
      TimelineLane& lane = t.lanes.emplace_back();
      lane.label = fmt::format("GPU {} busy", d);
      AddClipped(lane, context.Busy(d), a, b, "gpu", "GPU busy");
    }
    TimelineLane& api = t.lanes.emplace_back();
    api.label = main + ": CUDA calls";
    const ApiCallTable& calls = trace.api_calls;
    for (size_t i =
             static_cast<size_t>(std::lower_bound(calls.start_ns.begin(), calls.start_ns.end(), a) -
                                 calls.start_ns.begin());
         i < calls.size() && calls.start_ns[i] < b && api.spans.size() < kMaxSpansPerLane; ++i) {
      if (calls.pid[i] != pid || calls.tid[i] != tid) continue;
      api.spans.push_back({calls.start_ns[i], std::min(calls.end_ns[i], b), "cuda_api",
                           std::string(trace.str(calls.name[i]))});
    }
    const int32_t own_range = it->range_row;  // a lambda may not capture `it` (clang 14)
    auto ranges_of = [&](int32_t p, int32_t th, TimelineLane& lane) {
      const RangeTable& rg = trace.ranges;
      for (size_t i = static_cast<size_t>(
               std::lower_bound(rg.start_ns.begin(), rg.start_ns.end(), a) - rg.start_ns.begin());
           i < rg.size() && rg.start_ns[i] < b && lane.spans.size() < kMaxSpansPerLane; ++i) {
        if (rg.pid[i] != p || rg.tid[i] != th || static_cast<int32_t>(i) == own_range) continue;
        lane.spans.push_back({rg.start_ns[i], std::min(rg.end_ns[i], b), "nvtx",
                              std::string(trace.str(rg.name[i]))});
      }
    };
    TimelineLane& nvtx = t.lanes.emplace_back();
    nvtx.label = main + ": NVTX";
    ranges_of(pid, tid, nvtx);
    if (r.has_gil) {
      TimelineLane& gil = t.lanes.emplace_back();
      gil.label = main + ": GIL";
      AddClipped(gil, context.GilHeld(pid, tid), a, b, "gil_held", "holding the GIL");
      AddClipped(gil, context.GilWaited(pid, tid), a, b, "gil_wait", "waiting for the GIL");
    }
    if (r.has_os_calls) {
      TimelineLane& os = t.lanes.emplace_back();
      os.label = main + ": OS waits";
      AddClipped(os, context.Waits(pid, tid).os_wait, a, b, "os_wait", "waiting in an OS call");
    }
    if (r.has_gc) {
      TimelineLane& gc = t.lanes.emplace_back();
      gc.label = "garbage collection";
      AddClipped(gc, context.GcIntervals(pid), a, b, "gc", "garbage collection");
    }
    // The other threads of the process that held the GIL longest in the iteration.
    std::vector<std::pair<DurationNs, std::pair<int32_t, int32_t>>> others;
    for (const auto& [p, th] : context.GilThreads()) {
      if (p != pid || th == tid) continue;
      const DurationNs held = BusyWithin(context.GilHeld(p, th), a, b);
      if (held > 0) others.push_back({held, {p, th}});
    }
    std::stable_sort(others.begin(), others.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t k = 0; k < std::min(kOtherThreadLanes, others.size()); ++k) {
      const auto [p, th] = others[k].second;
      TimelineLane& gil = t.lanes.emplace_back();
      gil.label = thread_label(p, th) + ": GIL";
      AddClipped(gil, context.GilHeld(p, th), a, b, "gil_held", "holding the GIL");
      TimelineLane nvtx_lane;
      nvtx_lane.label = thread_label(p, th) + ": NVTX";
      ranges_of(p, th, nvtx_lane);
      if (!nvtx_lane.spans.empty()) t.lanes.push_back(std::move(nvtx_lane));
    }
    t.note =
        "green: GPU busy; blue: CUDA calls; purple: NVTX ranges; orange: holding the GIL; red: "
        "waiting for it; brown: OS waits; black: garbage collection (hover for names)";
  }
}

// Each thread's GIL, OS waits and off-CPU per iteration: the median against the slowest iteration.
void AddThreadsPerIterationTable(const ThreadsResult& r, const AnalyzeOptions& options,
                                 Section& s) {
  const ThreadsPerIterationResult& p = r.per_thread_iteration;
  if (p.threads.empty()) return;
  std::vector<Column> columns = {{"pid", "pid", Unit::kNumber},
                                 {"tid", "tid", Unit::kNumber},
                                 {"name", "name", Unit::kText},
                                 {"role", "role", Unit::kText}};
  auto pair = [&](const char* key, const char* label) {
    columns.push_back(
        {fmt::format("{}_median_ns", key), fmt::format("{} median", label), Unit::kDurationNs});
    columns.push_back(
        {fmt::format("{}_slowest_ns", key), fmt::format("{} slowest", label), Unit::kDurationNs});
  };
  if (r.has_gil) {
    pair("gil_held", "GIL held");
    pair("gil_waited", "GIL waited");
  }
  if (r.has_os_calls) pair("os_wait", "OS waits");
  if (r.has_off_cpu) pair("off_cpu", "off-CPU");
  Table& t =
      s.AddTable("threads_per_iteration",
                 fmt::format("Threads per iteration: median against the slowest (iteration {})",
                             p.slowest_iteration),
                 columns);
  const size_t limit = std::min(p.threads.size(), static_cast<size_t>(std::max(options.top_n, 1)));
  for (size_t i = 0; i < limit; ++i) {
    const ThreadPerIteration& x = p.threads[i];
    std::vector<Value> row = {int64_t{x.pid}, int64_t{x.tid}, x.name,
                              std::string(ThreadRoleName(x.role))};
    auto add = [&](const PerIterationPart& part) {
      row.push_back(static_cast<int64_t>(part.median_ns));
      row.push_back(part.slowest_ns);
    };
    if (r.has_gil) {
      add(x.gil_held);
      add(x.gil_waited);
    }
    if (r.has_os_calls) add(x.os_wait);
    if (r.has_off_cpu) add(x.off_cpu);
    t.rows.push_back(std::move(row));
  }
  if (p.threads.size() > limit) t.total_rows = static_cast<int64_t>(p.threads.size());
  t.note = fmt::format(
      "each thread's time inside the main set's iterations, clipped to each; the median over the "
      "iterations (wall {}) against the slowest one (wall {})",
      FormatDuration(static_cast<int64_t>(p.median_wall_ns)), FormatDuration(p.slowest_wall_ns));
}

// Each thread's NVTX time by range name: over the trace and per iteration.
void AddThreadRangesTable(const ThreadsResult& r, const AnalyzeOptions& options, Section& s) {
  const ThreadRangesResult& x = r.ranges;
  if (x.rows.empty()) return;
  std::vector<Column> columns = {
      {"pid", "pid", Unit::kNumber},     {"tid", "tid", Unit::kNumber},
      {"thread", "thread", Unit::kText}, {"range", "range", Unit::kText},
      {"count", "count", Unit::kCount},  {"total_ns", "total", Unit::kDurationNs}};
  if (x.per_iteration) {
    columns.push_back({"iteration_median_ns", "per iteration median", Unit::kDurationNs});
    columns.push_back({"iteration_slowest_ns", "in the slowest", Unit::kDurationNs});
  }
  Table& t = s.AddTable("thread_ranges", "NVTX ranges per thread", columns);
  // The first top_n threads, each with its names.
  const size_t max_threads = static_cast<size_t>(std::max(options.top_n, 1));
  size_t threads_shown = 0, shown = 0;
  for (size_t i = 0; i < x.rows.size(); ++i) {
    const ThreadRangeRow& row = x.rows[i];
    const bool new_thread = i == 0 || row.pid != x.rows[i - 1].pid || row.tid != x.rows[i - 1].tid;
    if (new_thread && ++threads_shown > max_threads) break;
    std::vector<Value> v = {int64_t{row.pid}, int64_t{row.tid}, row.thread,
                            row.name,         row.count,        row.total_ns};
    if (x.per_iteration) {
      v.push_back(static_cast<int64_t>(row.per_iteration.median_ns));
      v.push_back(row.per_iteration.slowest_ns);
    }
    t.rows.push_back(std::move(v));
    ++shown;
  }
  if (shown < x.rows.size()) t.total_rows = static_cast<int64_t>(x.rows.size());
  t.note = fmt::format(
      "NVTX push/pop and start/end ranges and PyTorch record_function ranges on each thread, "
      "names grouped with digit runs as N; total = the union of a name's ranges (nesting in the "
      "same name not counted twice); at most {} names per thread by total",
      kRangeNamesPerThread);
  if (x.names_left_out > 0) t.note += fmt::format(" ({} more left out)", x.names_left_out);
  if (x.per_iteration) {
    t.note += fmt::format(
        "; per iteration = clipped to each iteration of the main set (its own iteration ranges "
        "left out): the median over the iterations, and the value in the slowest (iteration {})",
        x.slowest_iteration);
  }
}

}  // namespace

std::string HotFrames(const Trace& trace, const StackSampleTable& p, int32_t pid, int32_t tid,
                      const std::vector<Interval>& within, size_t n) {
  std::map<StringId, int64_t> counts;
  int64_t total = 0;
  for (const Interval& iv : within) {
    auto first =
        std::lower_bound(p.time_ns.begin(), p.time_ns.end(), iv.start_ns) - p.time_ns.begin();
    for (size_t i = static_cast<size_t>(first); i < p.size() && p.time_ns[i] < iv.end_ns; ++i) {
      if (p.pid[i] != pid || p.tid[i] != tid || p.frame_count[i] == 0) continue;
      ++counts[p.frames[static_cast<size_t>(p.first_frame[i])]];
      ++total;
    }
  }
  std::vector<std::pair<int64_t, StringId>> top;
  for (const auto& [frame, c] : counts) top.push_back({c, frame});
  std::stable_sort(top.begin(), top.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (size_t i = 0; i < std::min(n, top.size()); ++i) {
    out += fmt::format("{}{} {:.0f}%", i ? ", " : "", trace.str(top[i].second),
                       100.0 * static_cast<double>(top[i].first) / static_cast<double>(total));
  }
  return out;
}

std::string HotFrames(const Trace& trace, int32_t pid, int32_t tid,
                      const std::vector<Interval>& within, size_t n) {
  return HotFrames(trace, trace.py_samples, pid, tid, within, n);
}

std::string HotFrames(const Trace& trace, int32_t pid, int32_t tid, TimeNs a, TimeNs b, size_t n) {
  return HotFrames(trace, trace.py_samples, pid, tid, std::vector<Interval>{{a, b}}, n);
}

StatusOr<const ThreadsResult*> CachedThreads(AnalysisContext& context) {
  return context.results().Get<ThreadsResult>(
      "threads", [&context] { return ComputeThreads(context, ThreadsOptions{}); });
}

StatusOr<ThreadsResult> ComputeThreads(AnalysisContext& context, const ThreadsOptions&) {
  const Trace& trace = context.trace();
  ThreadsResult res;
  res.has_gil = context.HasGil();
  std::map<uint64_t, Acc> threads;
  auto at = [&](int32_t pid, int32_t tid) -> Acc& {
    Acc& a = threads[Key(pid, tid)];
    a.row.pid = pid;
    a.row.tid = tid;
    return a;
  };
  for (const ThreadInfo& t : trace.threads) {
    Acc& a = at(t.pid, t.tid);
    a.row.name = t.name;
    a.row.role = t.role;
    a.listed = true;
  }
  const ApiCallTable& api = trace.api_calls;
  for (size_t i = 0; i < api.size(); ++i) {
    Acc& a = at(api.pid[i], api.tid[i]);
    a.row.cuda_api_ns += api.dur_ns(i);
    a.row.launches += api.api_class[i] == ApiClass::kLaunch;
  }
  const RangeTable& r = trace.ranges;
  StringPool pool;  // the ranges' name patterns ("iteration N"); `threads` keeps views into it
  std::vector<StringId> patterns(trace.strings.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.depth[i] == 0 && r.kind[i] != RangeKind::kPythonFunction) {
      // "iteration 12" and "iteration 13" add up as "iteration N".
      StringId& pattern = patterns[r.name[i].value];
      if (pattern == StringId{}) pattern = pool.Intern(DigitRunsToN(trace.str(r.name[i])));
      at(r.pid[i], r.tid[i]).ranges[pool.Get(pattern)] += r.dur_ns(i);
    }
  }
  for (const auto& [pid, tid] : context.GilThreads()) {
    Acc& a = at(pid, tid);
    a.row.gil_held_ns = TotalLength(context.GilHeld(pid, tid));
    a.row.gil_waited_ns = TotalLength(context.GilWaited(pid, tid));
  }
  res.has_os_calls = context.HasOsCalls();
  res.has_os_call_chains =
      std::any_of(trace.os_calls.frame_count.begin(), trace.os_calls.frame_count.end(),
                  [](int32_t n) { return n > 0; });
  res.has_off_cpu = context.HasOffCpu();
  for (size_t i = 0; i < trace.os_calls.size(); ++i)
    at(trace.os_calls.pid[i], trace.os_calls.tid[i]);
  for (size_t i = 0; i < trace.off_cpu.size(); ++i) at(trace.off_cpu.pid[i], trace.off_cpu.tid[i]);
  const StackSampleTable& samples = trace.py_samples;
  res.has_samples = samples.size() > 0;
  for (size_t i = 0; i < samples.size(); ++i) ++at(samples.pid[i], samples.tid[i]).row.py_samples;
  const StackSampleTable& cpu = trace.cpu_samples;
  res.has_cpu_samples = cpu.size() > 0;
  for (size_t i = 0; i < cpu.size(); ++i) ++at(cpu.pid[i], cpu.tid[i]).row.cpu_samples;
  // PyTorch's python_function ranges (with_stack): self time per frame and thread, a frame's self
  // time being its duration less that of the Python frames it called (its nearest Python
  // ancestor's child).
  std::vector<DurationNs> child_ns;
  std::map<uint64_t, std::map<StringId, DurationNs>> py_self;  // by thread
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::kPythonFunction) continue;
    if (child_ns.empty()) child_ns.assign(r.size(), 0);
    int32_t p = r.parent[i];
    while (p != kNoRow && r.kind[p] != RangeKind::kPythonFunction) p = r.parent[p];
    if (p != kNoRow) child_ns[p] += r.dur_ns(i);
  }
  if (!child_ns.empty()) {
    res.has_py_functions = true;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.kind[i] != RangeKind::kPythonFunction) continue;
      py_self[Key(r.pid[i], r.tid[i])][r.name[i]] +=
          std::max<DurationNs>(0, r.dur_ns(i) - child_ns[i]);
    }
  }
  for (auto& [key, a] : threads) {
    if (auto it = py_self.find(key); it != py_self.end() && a.row.py_samples == 0) {
      std::vector<std::pair<DurationNs, StringId>> top;
      DurationNs total = 0;
      for (const auto& [name, ns] : it->second) {
        top.push_back({ns, name});
        total += ns;
      }
      std::stable_sort(top.begin(), top.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      for (size_t i = 0; i < std::min<size_t>(3, top.size()) && total > 0; ++i) {
        a.row.hot_frames += fmt::format("{}{} {:.0f}%", i ? ", " : "", trace.str(top[i].second),
                                        100.0 * static_cast<double>(top[i].first) / total);
      }
    }
    const ThreadWaits& w = context.Waits(a.row.pid, a.row.tid);
    a.row.os_wait_ns = TotalLength(w.os_wait);
    a.row.off_cpu_ns = TotalLength(w.off_cpu);
    if (a.row.py_samples > 0) {
      a.row.hot_frames = HotFrames(trace, a.row.pid, a.row.tid, INT64_MIN, INT64_MAX, 3);
    }
    a.row.has_py_frames = !a.row.hot_frames.empty();
    if (a.row.cpu_samples > 0) {
      a.row.hot_native =
          HotFrames(trace, trace.cpu_samples, a.row.pid, a.row.tid, {{INT64_MIN, INT64_MAX}}, 3);
    }
  }
  for (auto& [key, a] : threads) {
    if (!a.listed) {  // a thread the trace does not list (no launches: the builder lists those)
      a.row.role = a.row.launches > 0 ? ThreadRole::kLaunching : ThreadRole::kOther;
    }
    std::vector<std::pair<DurationNs, std::string_view>> top;
    for (const auto& [name, ns] : a.ranges) top.push_back({ns, name});
    std::stable_sort(top.begin(), top.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t i = 0; i < std::min<size_t>(3, top.size()); ++i) {
      a.row.top_ranges +=
          fmt::format("{}{} ({})", i ? ", " : "", top[i].second, FormatDuration(top[i].first));
    }
  }
  // The main launching thread: the most launch calls (AnalysisContext::MainLaunchingThread).
  const LaunchingThread main = context.MainLaunchingThread();
  if (main.tid >= 0 || main.pid >= 0) {
    res.main_pid = main.pid;
    res.main_tid = main.tid;
    const std::vector<Interval>& waited = context.GilWaited(main.pid, main.tid);
    res.main_waited_ns = TotalLength(waited);
    if (!waited.empty()) {
      for (const auto& [pid, tid] : context.GilThreads()) {
        if (pid != main.pid || tid == main.tid) continue;
        const DurationNs t = IntersectionLength(waited, context.GilHeld(pid, tid));
        if (t <= 0) continue;
        const ThreadRow& x = threads[Key(pid, tid)].row;
        res.holders.push_back({pid, tid, x.name, x.role, t});
      }
      std::stable_sort(res.holders.begin(), res.holders.end(),
                       [](const GilHolder& x, const GilHolder& y) {
                         return x.held_while_waited_ns > y.held_while_waited_ns;
                       });
    }
  }
  for (auto& [key, a] : threads) {
    const ThreadRow& t = a.row;
    if (t.launches == 0 && t.cuda_api_ns == 0 && t.gil_held_ns == 0 && t.gil_waited_ns == 0 &&
        t.os_wait_ns == 0 && t.py_samples == 0 && !t.has_py_frames && t.cpu_samples == 0 &&
        t.top_ranges.empty()) {
      continue;  // a named thread that did nothing the trace shows
    }
    res.threads.push_back(t);
  }
  auto rank = [](const ThreadRow& t) {
    return t.role == ThreadRole::kLaunching ? 0 : t.role == ThreadRole::kOther ? 1 : 2;
  };
  std::stable_sort(res.threads.begin(), res.threads.end(),
                   [&](const ThreadRow& x, const ThreadRow& y) {
                     if (rank(x) != rank(y)) return rank(x) < rank(y);
                     if (x.launches != y.launches) return x.launches > y.launches;
                     return x.gil_held_ns > y.gil_held_ns;
                   });
  // Garbage collection per process (pid -1, every process's, is left out: the processes say it).
  std::vector<int32_t> pids;
  for (const ProcessInfo& p : trace.processes) pids.push_back(p.pid);
  for (const auto& [key, a] : threads) pids.push_back(a.row.pid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  for (int32_t pid : pids) {
    if (pid < 0) continue;
    const std::vector<Interval>& gc = context.GcIntervals(pid);
    if (gc.empty()) continue;
    ProcessGc g;
    g.pid = pid;
    for (const ProcessInfo& p : trace.processes) {
      if (p.pid == pid) g.name = p.name;
    }
    g.collections = static_cast<int64_t>(gc.size());
    for (const Interval& iv : gc) {
      g.gc_ns += iv.end_ns - iv.start_ns;
      g.longest_ns = std::max(g.longest_ns, iv.end_ns - iv.start_ns);
    }
    res.gc.push_back(std::move(g));
  }
  res.has_gc = !context.GcIntervals(-1).empty();
  if (res.main_tid >= 0) {
    // The OS functions the launching thread waited in, outside CUDA calls, and where from.
    const ThreadWaits& w = context.Waits(res.main_pid, res.main_tid);
    std::map<StringId, std::pair<OsWaitRow, OsCallers>> by_name;
    const OsCallTable& os = trace.os_calls;
    for (size_t i = 0; i < os.size(); ++i) {
      if (os.pid[i] != res.main_pid || os.tid[i] != res.main_tid) continue;
      const DurationNs t = BusyWithin(w.os_wait, os.start_ns[i], os.end_ns[i]);
      if (t <= 0) continue;
      auto& [row, callers] = by_name[os.name[i]];
      row.name = std::string(trace.str(os.name[i]));
      ++row.calls;
      row.total_ns += t;
      row.longest_ns = std::max(row.longest_ns, t);
      callers.Add(trace, i, t);
    }
    for (auto& [name, x] : by_name) {
      auto& [row, callers] = x;
      row.with_chain = callers.calls - callers.without_chain;
      row.callers = callers.Top(2);
      res.main_os_waits.push_back(std::move(row));
    }
    std::stable_sort(
        res.main_os_waits.begin(), res.main_os_waits.end(),
        [](const OsWaitRow& x, const OsWaitRow& y) { return x.total_ns > y.total_ns; });
    // Per iteration of the main set, when the launching thread runs it.
    const IterationSet* set = context.MainSet();
    if (set != nullptr && !set->iterations.empty()) {
      std::vector<HostBreakdown> per;
      for (const Iteration& it : set->iterations) {
        per.push_back(context.HostWithin(res.main_pid, res.main_tid, it.start_ns, it.end_ns));
      }
      auto add = [&](const char* key, const char* label, DurationNs HostBreakdown::*part,
                     bool present) {
        if (!present) return;
        PerIterationHost p{key, label};
        std::vector<int64_t> values;
        for (size_t i = 0; i < per.size(); ++i) {
          const DurationNs v = per[i].*part;
          values.push_back(v);
          p.total_ns += v;
          if (p.worst_iteration < 0 || v > p.worst_ns) {
            p.worst_ns = v;
            p.worst_iteration = set->iterations[i].index;
          }
        }
        p.median_ns = Median(values);
        res.per_iteration.push_back(std::move(p));
      };
      add("gc_ns", "garbage collection (process)", &HostBreakdown::gc_ns, res.has_gc);
      add("gil_wait_ns", "GIL wait", &HostBreakdown::gil_wait_ns, res.has_gil);
      add("os_wait_ns", "OS waits outside CUDA calls", &HostBreakdown::os_wait_ns,
          res.has_os_calls);
      add("sync_ns", "blocking CUDA calls (process)", &HostBreakdown::sync_ns, true);
      add("off_cpu_ns", "off-CPU", &HostBreakdown::off_cpu_ns, res.has_off_cpu);
    }
  }
  res.per_thread_iteration = ComputeThreadsPerIteration(context, res);
  res.ranges = ComputeThreadRanges(context, res);
  return res;
}

Status RunThreadsSection(AnalysisContext& context, int input, Report& report) {
  ASSIGN_OR_RETURN(const ThreadsResult* result, CachedThreads(context));
  const ThreadsResult& r = *result;
  if (!r.has_gil && !r.has_gc && !r.has_os_calls && !r.has_samples && !r.has_off_cpu &&
      !r.has_py_functions && !r.has_cpu_samples) {
    return Status::Ok();
  }
  const AnalyzeOptions& options = context.options();
  Section& s = report.AddSection("threads", "Host threads", input);
  s.AddFact("threads", "Threads with activity", static_cast<int64_t>(r.threads.size()),
            Unit::kCount);
  if (r.main_tid >= 0) {
    s.AddFact("launching_thread", "Main launching thread (pid/tid)",
              fmt::format("{}/{}", r.main_pid, r.main_tid));
    if (r.has_gil) {
      s.AddFact("launching_thread_gil_wait_ns", "Its wait for the GIL", r.main_waited_ns,
                Unit::kDurationNs);
    }
  }
  std::vector<Column> columns = {
      {"pid", "pid", Unit::kNumber},          {"tid", "tid", Unit::kNumber},
      {"name", "name", Unit::kText},          {"role", "role", Unit::kText},
      {"launches", "launches", Unit::kCount}, {"cuda_api_ns", "CUDA API", Unit::kDurationNs}};
  if (r.has_gil) {
    columns.push_back({"gil_held_ns", "GIL held", Unit::kDurationNs});
    columns.push_back({"gil_waited_ns", "GIL waited", Unit::kDurationNs});
  }
  if (r.has_os_calls) columns.push_back({"os_wait_ns", "OS waits", Unit::kDurationNs});
  if (r.has_off_cpu) columns.push_back({"off_cpu_ns", "off-CPU", Unit::kDurationNs});
  if (r.has_samples) columns.push_back({"py_samples", "Py samples", Unit::kCount});
  if (r.has_samples || r.has_py_functions) {
    columns.push_back({"hot_frames", "hot Python frames", Unit::kText, true});
  }
  if (r.has_cpu_samples) {
    columns.push_back({"cpu_samples", "CPU samples", Unit::kCount});
    columns.push_back({"hot_native", "hot native functions", Unit::kText, true});
  }
  columns.push_back({"top_ranges", "top NVTX ranges", Unit::kText, true});
  Table& t = s.AddTable("threads", "Threads", columns);
  const size_t limit = std::min(r.threads.size(), static_cast<size_t>(std::max(options.top_n, 1)));
  for (size_t i = 0; i < limit; ++i) {
    const ThreadRow& x = r.threads[i];
    std::vector<Value> row = {int64_t{x.pid}, int64_t{x.tid},
                              x.name,         std::string(ThreadRoleName(x.role)),
                              x.launches,     x.cuda_api_ns};
    if (r.has_gil) {
      row.push_back(x.gil_held_ns);
      row.push_back(x.gil_waited_ns);
    }
    if (r.has_os_calls) row.push_back(x.os_wait_ns);
    if (r.has_off_cpu) row.push_back(x.off_cpu_ns);
    if (r.has_samples) row.push_back(x.py_samples);
    if (r.has_samples || r.has_py_functions) row.push_back(x.hot_frames);
    if (r.has_cpu_samples) {
      row.push_back(x.cpu_samples);
      row.push_back(x.hot_native);
    }
    row.push_back(x.top_ranges);
    t.rows.push_back(std::move(row));
  }
  if (r.threads.size() > limit) t.total_rows = static_cast<int64_t>(r.threads.size());
  t.note =
      "launching = issues CUDA launch calls; profiler = the profiler's own thread (never blamed)";
  if (r.has_gil) t.note += "; GIL held/waited = union of its GIL intervals (nsys -t python-gil)";
  if (r.has_os_calls) {
    t.note +=
        "; OS waits = waiting OS calls (poll, select, futex, condition waits, sleeps, ...) outside "
        "CUDA calls and GIL waits (nsys -t osrt)";
  }
  if (r.has_off_cpu) {
    t.note +=
        "; off-CPU = switched out by the scheduler (nsys --cpuctxsw; not read for profiler "
        "threads)";
  }
  if (r.has_samples) {
    t.note += "; hot Python frames = innermost frames of its samples (--python-sampling)";
  }
  if (r.has_cpu_samples) {
    t.note += "; hot native functions = innermost frames of its CPU samples (nsys -s process-tree)";
  }
  if (!r.has_samples && r.has_py_functions) {
    t.note +=
        "; hot Python frames = python_function ranges by self time (PyTorch profiler "
        "with_stack=True)";
  }
  if (!r.holders.empty()) {
    Table& h = s.AddTable("gil_holders", "Who held the GIL while the launching thread waited",
                          {{"pid", "pid", Unit::kNumber},
                           {"tid", "tid", Unit::kNumber},
                           {"name", "name", Unit::kText},
                           {"role", "role", Unit::kText},
                           {"held_ns", "held meanwhile", Unit::kDurationNs}});
    for (const GilHolder& x : r.holders) {
      h.rows.push_back({int64_t{x.pid}, int64_t{x.tid}, x.name, std::string(ThreadRoleName(x.role)),
                        x.held_while_waited_ns});
    }
  }
  if (!r.gc.empty()) {
    DurationNs total = 0;
    for (const ProcessGc& g : r.gc) total += g.gc_ns;
    s.AddFact("gc_ns", "Garbage collection (all processes)", total, Unit::kDurationNs);
    Table& g = s.AddTable("gc", "Garbage collection per process",
                          {{"pid", "pid", Unit::kNumber},
                           {"name", "process", Unit::kText},
                           {"collections", "collections", Unit::kCount},
                           {"gc_ns", "GC time", Unit::kDurationNs},
                           {"longest_ns", "longest", Unit::kDurationNs}});
    for (const ProcessGc& x : r.gc) {
      g.rows.push_back({int64_t{x.pid}, x.name, x.collections, x.gc_ns, x.longest_ns});
    }
    g.note = fmt::format("GC ranges named {} (--gc-ranges), read by time within their process",
                         fmt::join(options.gc_range_names, ", "));
  }
  AddIterationTimelines(context, r, s);
  if (!r.per_iteration.empty()) {
    Table& p = s.AddTable("launching_per_iteration", "The launching thread per iteration",
                          {{"part", "part", Unit::kText},
                           {"median_ns", "median", Unit::kDurationNs},
                           {"worst_ns", "worst", Unit::kDurationNs},
                           {"worst_iteration", "in iteration", Unit::kNumber},
                           {"total_ns", "total", Unit::kDurationNs}});
    for (const PerIterationHost& x : r.per_iteration) {
      p.rows.push_back(
          {x.label, static_cast<int64_t>(x.median_ns), x.worst_ns, x.worst_iteration, x.total_ns});
    }
    p.note =
        "each part clipped to the iteration; parts can overlap (docs/metrics.md, \"Host waits\")";
  }
  AddThreadsPerIterationTable(r, options, s);
  AddThreadRangesTable(r, options, s);
  if (!r.main_os_waits.empty()) {
    std::vector<Column> columns = {{"name", "function", Unit::kText},
                                   {"calls", "calls", Unit::kCount},
                                   {"total_ns", "waited", Unit::kDurationNs},
                                   {"longest_ns", "longest", Unit::kDurationNs}};
    if (r.has_os_call_chains) {
      columns.push_back({"with_chain", "with call chain", Unit::kCount});
      columns.push_back({"callers", "called from", Unit::kText, true});
    }
    Table& o = s.AddTable("launching_os_waits", "OS calls the launching thread waited in", columns);
    const size_t n =
        std::min(r.main_os_waits.size(), static_cast<size_t>(std::max(options.top_n, 1)));
    for (size_t i = 0; i < n; ++i) {
      const OsWaitRow& x = r.main_os_waits[i];
      std::vector<Value> row = {x.name, x.calls, x.total_ns, x.longest_ns};
      if (r.has_os_call_chains) {
        row.push_back(x.with_chain);
        row.push_back(x.callers);
      }
      o.rows.push_back(std::move(row));
    }
    if (r.main_os_waits.size() > n) o.total_rows = static_cast<int64_t>(r.main_os_waits.size());
    o.note = "outside CUDA calls (a driver's poll inside cudaStreamSynchronize counts as the sync)";
    if (r.has_os_call_chains) {
      o.note +=
          "; called from = the first frames of the calls' call chains (nsys OSRT_CALLCHAINS) "
          "outside the C library, innermost first (\"a < b\": a called by b), by waited time; "
          "nsys keeps a chain only for calls longer than --osrt-backtrace-threshold (80 us by "
          "default), so calls without one are counted apart (with call chain < calls)";
    }
  }
  return Status::Ok();
}

}  // namespace sightline
