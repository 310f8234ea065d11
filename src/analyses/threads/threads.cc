#include "analyses/threads/threads.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/common/analysis_context.h"
#include "analyses/threads/os_call_chains.h"
#include "base/name_pattern.h"
#include "base/stats.h"
#include "facts/intervals.h"

namespace sightline {
namespace {

uint64_t ThreadRowKey(int32_t pid, int32_t tid) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
}

struct ThreadAcc {
  ThreadRow row;
  bool listed = false;  // in trace.threads (its role comes from there)
  std::map<std::string_view, DurationNs> ranges;
};
using ThreadMap = std::map<uint64_t, ThreadAcc>;
// Per thread, a python_function frame's self time.
using PySelfTime = std::map<uint64_t, std::map<StringId, DurationNs>>;

// Every thread the trace shows doing something, with what the tables say of it: its name and
// role, CUDA calls, outermost ranges by name pattern ("iteration 12" and "iteration 13" add up as
// "iteration N"; the names are views into `pool`), GIL, samples; sets res's has_* flags.
ThreadMap CollectThreads(AnalysisContext& context, StringPool& pool, ThreadsResult& res) {
  const Trace& trace = context.trace();
  ThreadMap threads;
  auto at = [&](int32_t pid, int32_t tid) -> ThreadAcc& {
    ThreadAcc& a = threads[ThreadRowKey(pid, tid)];
    a.row.pid = pid;
    a.row.tid = tid;
    return a;
  };
  for (const ThreadInfo& t : trace.threads) {
    ThreadAcc& a = at(t.pid, t.tid);
    a.row.name = t.name;
    a.row.role = t.role;
    a.listed = true;
  }
  const ApiCallTable& api = trace.api_calls;
  for (size_t i = 0; i < api.size(); ++i) {
    ThreadAcc& a = at(api.pid[i], api.tid[i]);
    a.row.cuda_api_ns += api.dur_ns(i);
    a.row.launches += api.api_class[i] == ApiClass::kLaunch;
  }
  const RangeTable& r = trace.ranges;
  std::vector<StringId> patterns(trace.strings.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.depth[i] == 0 && r.kind[i] != RangeKind::kPythonFunction) {
      StringId& pattern = patterns[r.name[i].value];
      if (pattern == StringId{}) pattern = pool.Intern(DigitRunsToN(trace.str(r.name[i])));
      at(r.pid[i], r.tid[i]).ranges[pool.Get(pattern)] += r.dur_ns(i);
    }
  }
  for (const auto& [pid, tid] : context.host().GilThreads()) {
    ThreadAcc& a = at(pid, tid);
    a.row.gil_held_ns = TotalLength(context.host().GilHeld(pid, tid));
    a.row.gil_waited_ns = TotalLength(context.host().GilWaited(pid, tid));
  }
  res.has_os_calls = context.host().HasOsCalls();
  res.has_os_call_chains =
      std::any_of(trace.os_calls.frame_count.begin(), trace.os_calls.frame_count.end(),
                  [](int32_t n) { return n > 0; });
  res.has_off_cpu = context.host().HasOffCpu();
  for (size_t i = 0; i < trace.os_calls.size(); ++i)
    at(trace.os_calls.pid[i], trace.os_calls.tid[i]);
  for (size_t i = 0; i < trace.off_cpu.size(); ++i) at(trace.off_cpu.pid[i], trace.off_cpu.tid[i]);
  const StackSampleTable& samples = trace.py_samples;
  res.has_samples = samples.size() > 0;
  for (size_t i = 0; i < samples.size(); ++i) ++at(samples.pid[i], samples.tid[i]).row.py_samples;
  const StackSampleTable& cpu = trace.cpu_samples;
  res.has_cpu_samples = cpu.size() > 0;
  for (size_t i = 0; i < cpu.size(); ++i) ++at(cpu.pid[i], cpu.tid[i]).row.cpu_samples;
  return threads;
}

// PyTorch's python_function ranges (with_stack): self time per frame and thread, a frame's self
// time being its duration less that of the Python frames it called (its nearest Python
// ancestor's child). Empty without such ranges.
PySelfTime PythonSelfTime(const Trace& trace) {
  const RangeTable& r = trace.ranges;
  std::vector<DurationNs> child_ns;
  PySelfTime py_self;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::kPythonFunction) continue;
    if (child_ns.empty()) child_ns.assign(r.size(), 0);
    int32_t p = r.parent[i];
    while (p != kNoRow && r.kind[p] != RangeKind::kPythonFunction) p = r.parent[p];
    if (p != kNoRow) child_ns[p] += r.dur_ns(i);
  }
  if (child_ns.empty()) return py_self;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != RangeKind::kPythonFunction) continue;
    py_self[ThreadRowKey(r.pid[i], r.tid[i])][r.name[i]] +=
        std::max<DurationNs>(0, r.dur_ns(i) - child_ns[i]);
  }
  return py_self;
}

// The rest of a thread's row: hot Python frames (samples, else python_function self time),
// native frames, waits, its role when the trace does not list it, and its top ranges.
void FinishRow(AnalysisContext& context, const PySelfTime& py_self, uint64_t key, ThreadAcc& a) {
  const Trace& trace = context.trace();
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
  const ThreadWaits& w = context.host().Waits(a.row.pid, a.row.tid);
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

// The main launching thread (the most launch calls, HostFacts::MainLaunchingThread), its
// GIL wait, and who held the GIL meanwhile.
void FindGilHolders(AnalysisContext& context, ThreadMap& threads, ThreadsResult& res) {
  const LaunchingThread main = context.host().MainLaunchingThread();
  if (main.tid < 0 && main.pid < 0) return;
  res.main_pid = main.pid;
  res.main_tid = main.tid;
  const std::vector<Interval>& waited = context.host().GilWaited(main.pid, main.tid);
  res.main_waited_ns = TotalLength(waited);
  if (waited.empty()) return;
  for (const auto& [pid, tid] : context.host().GilThreads()) {
    if (pid != main.pid || tid == main.tid) continue;
    const DurationNs t = IntersectionLength(waited, context.host().GilHeld(pid, tid));
    if (t <= 0) continue;
    const ThreadRow& x = threads[ThreadRowKey(pid, tid)].row;
    res.holders.push_back({pid, tid, x.name, x.role, t});
  }
  std::stable_sort(res.holders.begin(), res.holders.end(),
                   [](const GilHolder& x, const GilHolder& y) {
                     return x.held_while_waited_ns > y.held_while_waited_ns;
                   });
}

// The threads that did something the trace shows: launching first, then by launches and GIL
// held, profiler threads last.
std::vector<ThreadRow> ListThreads(const ThreadMap& threads) {
  std::vector<ThreadRow> rows;
  for (const auto& [key, a] : threads) {
    const ThreadRow& t = a.row;
    if (t.launches == 0 && t.cuda_api_ns == 0 && t.gil_held_ns == 0 && t.gil_waited_ns == 0 &&
        t.os_wait_ns == 0 && t.py_samples == 0 && !t.has_py_frames && t.cpu_samples == 0 &&
        t.top_ranges.empty()) {
      continue;  // a named thread that did nothing the trace shows
    }
    rows.push_back(t);
  }
  auto rank = [](const ThreadRow& t) {
    return t.role == ThreadRole::kLaunching ? 0 : t.role == ThreadRole::kOther ? 1 : 2;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const ThreadRow& x, const ThreadRow& y) {
    if (rank(x) != rank(y)) return rank(x) < rank(y);
    if (x.launches != y.launches) return x.launches > y.launches;
    return x.gil_held_ns > y.gil_held_ns;
  });
  return rows;
}

// Garbage collection per process (pid -1, every process's, is left out: the processes say it).
std::vector<ProcessGc> GcPerProcess(AnalysisContext& context, const ThreadMap& threads) {
  const Trace& trace = context.trace();
  std::vector<int32_t> pids;
  for (const ProcessInfo& p : trace.processes) pids.push_back(p.pid);
  for (const auto& [key, a] : threads) pids.push_back(a.row.pid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  std::vector<ProcessGc> out;
  for (int32_t pid : pids) {
    if (pid < 0) continue;
    const std::vector<Interval>& gc = context.host().GcIntervals(pid);
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
    out.push_back(std::move(g));
  }
  return out;
}

// The OS functions the launching thread waited in, outside CUDA calls, and where from; longest
// total first.
std::vector<OsWaitRow> LaunchingOsWaits(AnalysisContext& context, const ThreadsResult& res) {
  const Trace& trace = context.trace();
  const ThreadWaits& w = context.host().Waits(res.main_pid, res.main_tid);
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
  std::vector<OsWaitRow> out;
  for (auto& [name, x] : by_name) {
    auto& [row, callers] = x;
    row.with_chain = callers.calls - callers.without_chain;
    row.callers = callers.Top(2);
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const OsWaitRow& x, const OsWaitRow& y) { return x.total_ns > y.total_ns; });
  return out;
}

// The launching thread's host time per iteration of the main set, part by part; empty without
// iterations.
std::vector<PerIterationHost> LaunchingPerIteration(AnalysisContext& context,
                                                    const ThreadsResult& res) {
  std::vector<PerIterationHost> out;
  const IterationSet* set = context.loop().MainSet();
  if (set == nullptr || set->iterations.empty()) return out;
  std::vector<HostBreakdown> per;
  for (const Iteration& it : set->iterations) {
    per.push_back(context.host().HostWithin(res.main_pid, res.main_tid, it.start_ns, it.end_ns));
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
    out.push_back(std::move(p));
  };
  add("gc_ns", "garbage collection (process)", &HostBreakdown::gc_ns, res.has_gc);
  add("gil_wait_ns", "GIL wait", &HostBreakdown::gil_wait_ns, res.has_gil);
  add("os_wait_ns", "OS waits outside CUDA calls", &HostBreakdown::os_wait_ns, res.has_os_calls);
  add("sync_ns", "blocking CUDA calls (process)", &HostBreakdown::sync_ns, true);
  add("off_cpu_ns", "off-CPU", &HostBreakdown::off_cpu_ns, res.has_off_cpu);
  return out;
}

}  // namespace

StatusOr<const ThreadsResult*> CachedThreads(AnalysisContext& context) {
  return context.results().Get<ThreadsResult>(
      "threads", [&context] { return ComputeThreads(context, ThreadsOptions{}); });
}

StatusOr<ThreadsResult> ComputeThreads(AnalysisContext& context, const ThreadsOptions&) {
  ThreadsResult res;
  res.has_gil = context.host().HasGil();
  StringPool pool;  // the ranges' name patterns; `threads` keeps views into it
  ThreadMap threads = CollectThreads(context, pool, res);
  const PySelfTime py_self = PythonSelfTime(context.trace());
  res.has_py_functions = !py_self.empty();
  for (auto& [key, a] : threads) FinishRow(context, py_self, key, a);
  FindGilHolders(context, threads, res);
  res.threads = ListThreads(threads);
  res.gc = GcPerProcess(context, threads);
  res.has_gc = !context.host().GcIntervals(-1).empty();
  if (res.main_tid >= 0) {
    res.main_os_waits = LaunchingOsWaits(context, res);
    res.per_iteration = LaunchingPerIteration(context, res);
  }
  res.per_thread_iteration = ComputeThreadsPerIteration(context, res);
  res.ranges = ComputeThreadRanges(context, res);
  return res;
}

}  // namespace sightline
