#include "analyses/threads.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/analysis_context.h"
#include "analyses/intervals.h"

namespace sightline {
namespace {

constexpr std::string_view kGilDomain = "GIL Trace";
constexpr std::string_view kHolding = "Holding GIL";
constexpr std::string_view kWaiting = "Waiting for GIL";

uint64_t Key(int32_t pid, int32_t tid) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
}

bool IsProfilerThread(std::string_view name) {
  // nsys's Python sampler and its other helper threads; a profiler's thread is never the cause.
  return name.rfind("NSys", 0) == 0 || name.rfind("nsys", 0) == 0 ||
         name.find("PySampling") != std::string_view::npos;
}

struct Acc {
  ThreadRow row;
  std::vector<Interval> held, waited;
  std::map<std::string_view, DurationNs> ranges;
};

}  // namespace

const char* ThreadRoleName(ThreadRole role) {
  switch (role) {
    case ThreadRole::kLaunching:
      return "launching";
    case ThreadRole::kProfiler:
      return "profiler";
    case ThreadRole::kOther:
      return "other";
  }
  return "other";
}

StatusOr<ThreadsResult> ComputeThreads(AnalysisContext& context, const ThreadsOptions&) {
  const Trace& trace = context.trace();
  ThreadsResult res;
  std::map<uint64_t, Acc> threads;
  auto at = [&](int32_t pid, int32_t tid) -> Acc& {
    Acc& a = threads[Key(pid, tid)];
    a.row.pid = pid;
    a.row.tid = tid;
    return a;
  };
  for (const ThreadInfo& t : trace.threads) at(t.pid, t.tid).row.name = t.name;
  const ApiCallTable& api = trace.api_calls;
  for (size_t i = 0; i < api.size(); ++i) {
    Acc& a = at(api.pid[i], api.tid[i]);
    a.row.cuda_api_ns += api.dur_ns(i);
    a.row.launches += api.api_class[i] == ApiClass::kLaunch;
  }
  const RangeTable& r = trace.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    const std::string_view name = trace.str(r.name[i]);
    if (trace.str(r.domain[i]) == kGilDomain) {
      if (name == kHolding) {
        at(r.pid[i], r.tid[i]).held.push_back({r.start_ns[i], r.end_ns[i]});
        res.has_gil = true;
      } else if (name == kWaiting) {
        at(r.pid[i], r.tid[i]).waited.push_back({r.start_ns[i], r.end_ns[i]});
        res.has_gil = true;
      }
      continue;
    }
    if (r.depth[i] == 0 && r.kind[i] != RangeKind::kPythonFunction) {
      at(r.pid[i], r.tid[i]).ranges[name] += r.dur_ns(i);
    }
  }
  // The main launching thread: the most launch calls.
  const Acc* main = nullptr;
  for (auto& [key, a] : threads) {
    a.held = MergeIntervals(std::move(a.held));
    a.waited = MergeIntervals(std::move(a.waited));
    a.row.gil_held_ns = TotalLength(a.held);
    a.row.gil_waited_ns = TotalLength(a.waited);
    a.row.role = IsProfilerThread(a.row.name) ? ThreadRole::kProfiler
                 : a.row.launches > 0         ? ThreadRole::kLaunching
                                              : ThreadRole::kOther;
    std::vector<std::pair<DurationNs, std::string_view>> top;
    for (const auto& [name, ns] : a.ranges) top.push_back({ns, name});
    std::sort(top.begin(), top.end(),
              [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t i = 0; i < std::min<size_t>(3, top.size()); ++i) {
      a.row.top_ranges +=
          fmt::format("{}{} ({})", i ? ", " : "", top[i].second, FormatDuration(top[i].first));
    }
    if (a.row.launches > 0 && (main == nullptr || a.row.launches > main->row.launches)) main = &a;
  }
  if (main != nullptr) {
    res.main_pid = main->row.pid;
    res.main_tid = main->row.tid;
    res.main_waited_ns = main->row.gil_waited_ns;
    for (const auto& [key, a] : threads) {
      if (&a == main || a.row.pid != main->row.pid || a.held.empty()) continue;
      const DurationNs t = IntersectionLength(main->waited, a.held);
      if (t > 0) {
        res.holders.push_back({a.row.pid, a.row.tid, a.row.name, a.row.role, t});
      }
    }
    std::sort(res.holders.begin(), res.holders.end(), [](const GilHolder& x, const GilHolder& y) {
      return x.held_while_waited_ns > y.held_while_waited_ns;
    });
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
  return res;
}

Status RunThreadsSection(AnalysisContext& context, int input, Report& report) {
  ASSIGN_OR_RETURN(const ThreadsResult* result, context.Threads());
  const ThreadsResult& r = *result;
  if (!r.has_gil) return Status::Ok();
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
      "blamed); GIL held/waited = union of nsys's GIL Trace ranges";
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
  return Status::Ok();
}

}  // namespace sightline
