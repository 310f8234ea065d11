#include "analyses/threads.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "analyses/analysis_context.h"
#include "analyses/intervals.h"

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

}  // namespace

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
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.depth[i] == 0 && r.kind[i] != RangeKind::kPythonFunction) {
      at(r.pid[i], r.tid[i]).ranges[trace.str(r.name[i])] += r.dur_ns(i);
    }
  }
  for (const auto& [pid, tid] : context.GilThreads()) {
    Acc& a = at(pid, tid);
    a.row.gil_held_ns = TotalLength(context.GilHeld(pid, tid));
    a.row.gil_waited_ns = TotalLength(context.GilWaited(pid, tid));
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
  return res;
}

Status RunThreadsSection(AnalysisContext& context, int input, Report& report) {
  ASSIGN_OR_RETURN(const ThreadsResult* result, context.Threads());
  const ThreadsResult& r = *result;
  if (!r.has_gil && !r.has_gc) return Status::Ok();
  const AnalyzeOptions& options = context.options();
  Section& s = report.AddSection("threads", "Host threads and the GIL", input);
  s.AddFact("threads", "Threads with activity", static_cast<int64_t>(r.threads.size()),
            Unit::kCount);
  if (r.main_tid >= 0) {
    s.AddFact("launching_thread", "Main launching thread (pid/tid)",
              fmt::format("{}/{}", r.main_pid, r.main_tid));
    s.AddFact("launching_thread_gil_wait_ns", "Its wait for the GIL", r.main_waited_ns,
              Unit::kDurationNs);
  }
  Table& t = s.AddTable("threads", "Threads",
                        {{"pid", "pid", Unit::kNumber},
                         {"tid", "tid", Unit::kNumber},
                         {"name", "name", Unit::kText},
                         {"role", "role", Unit::kText},
                         {"launches", "launches", Unit::kCount},
                         {"cuda_api_ns", "CUDA API", Unit::kDurationNs},
                         {"gil_held_ns", "GIL held", Unit::kDurationNs},
                         {"gil_waited_ns", "GIL waited", Unit::kDurationNs},
                         {"top_ranges", "top NVTX ranges", Unit::kText, true}});
  const size_t limit = std::min(r.threads.size(), static_cast<size_t>(std::max(options.top_n, 1)));
  for (size_t i = 0; i < limit; ++i) {
    const ThreadRow& x = r.threads[i];
    t.rows.push_back({int64_t{x.pid}, int64_t{x.tid}, x.name, std::string(ThreadRoleName(x.role)),
                      x.launches, x.cuda_api_ns, x.gil_held_ns, x.gil_waited_ns, x.top_ranges});
  }
  if (r.threads.size() > limit) t.total_rows = static_cast<int64_t>(r.threads.size());
  t.note =
      "launching = issues CUDA launch calls; profiler = the profiler's own thread (never "
      "blamed); GIL held/waited = union of the thread's GIL intervals (nsys -t python-gil)";
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
  return Status::Ok();
}

}  // namespace sightline
