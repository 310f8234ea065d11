// Rule blocking_os_call: the launching thread blocks in OS calls (poll, select, condition waits,
// sleeps, reads) inside the loop, outside CUDA calls, while the GPU has nothing to do.
// docs/analyses/findings.md, "blocking_os_call".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/findings/findings.h"
#include "analyses/threads/os_call_chains.h"

namespace sightline {
namespace {

constexpr double kBlockingMinShare = 0.03;    // of the loop's wall time
constexpr DurationNs kMinWaitNs = 1'000'000;  // 1 ms in the loop
constexpr double kBlockingHighShare = 0.15;
constexpr size_t kBlockingListed = 8;

struct ByName {
  int64_t calls = 0;
  DurationNs waited_ns = 0;
};

}  // namespace

Status RuleBlockingOsCall(AnalysisContext& c, std::vector<Finding>& out) {
  if (!c.host().HasOsCalls()) return Status::Ok();
  // The loop's launching thread: the iteration set's thread, else the thread with most launches.
  int32_t pid = -1, tid = -1;
  if (const IterationSet* set = c.loop().MainSet(); set != nullptr) {
    pid = set->pid;
    tid = set->tid;
  } else {
    const LaunchingThread t = c.host().MainLaunchingThread();
    pid = t.pid;
    tid = t.tid;
  }
  if (tid < 0) return Status::Ok();
  const std::vector<Interval>& waits = c.host().Waits(pid, tid).os_wait;
  if (waits.empty()) return Status::Ok();
  const Trace& trace = c.trace();
  const OsCallTable& os = trace.os_calls;

  Finding f;
  DurationNs loop = 0, waited = 0, idle_while_waiting = 0;
  std::map<StringId, ByName> by_name;
  OsCallers callers;  // where the waits were called from, when the calls have call chains
  struct Hit {
    const LoopWindow* w;
    DurationNs ns;
  };
  std::vector<Hit> hits;
  for (const LoopWindow& w : c.loop().Windows()) {
    if (w.pid >= 0 && w.pid != pid) continue;
    loop += w.end_ns - w.start_ns;
    const std::vector<Interval>& busy = c.gpu().Busy(w.device);
    DurationNs in_window = 0;
    auto it = std::lower_bound(waits.begin(), waits.end(), w.start_ns,
                               [](const Interval& iv, TimeNs t) { return iv.end_ns <= t; });
    for (; it != waits.end() && it->start_ns < w.end_ns; ++it) {
      const TimeNs a = std::max(it->start_ns, w.start_ns), b = std::min(it->end_ns, w.end_ns);
      if (b <= a) continue;
      in_window += b - a;
      idle_while_waiting += (b - a) - BusyWithin(busy, a, b);
      f.AddSpan(a, b, w.device);
    }
    if (in_window > 0) hits.push_back({&w, in_window});
    waited += in_window;
    // Which functions: the thread's calls that overlap the window, by their waiting part in it.
    auto first =
        std::lower_bound(os.start_ns.begin(), os.start_ns.end(), w.start_ns) - os.start_ns.begin();
    for (size_t i = static_cast<size_t>(first); i < os.size() && os.start_ns[i] < w.end_ns; ++i) {
      if (os.pid[i] != pid || os.tid[i] != tid) continue;
      const DurationNs t = BusyWithin(waits, os.start_ns[i], std::min(os.end_ns[i], w.end_ns));
      if (t <= 0) continue;
      ByName& n = by_name[os.name[i]];
      ++n.calls;
      n.waited_ns += t;
      callers.Add(trace, i, t);
    }
  }
  if (loop <= 0 || waited < kMinWaitNs) return Status::Ok();
  const double share = static_cast<double>(waited) / static_cast<double>(loop);
  if (share < kBlockingMinShare) return Status::Ok();

  std::vector<std::pair<StringId, ByName>> names(by_name.begin(), by_name.end());
  std::stable_sort(names.begin(), names.end(), [](const auto& x, const auto& y) {
    return x.second.waited_ns > y.second.waited_ns;
  });
  std::string top;
  for (size_t i = 0; i < std::min<size_t>(3, names.size()); ++i) {
    top += fmt::format("{}{} {} ({} call{})", i ? ", " : "", trace.str(names[i].first),
                       FormatDuration(names[i].second.waited_ns), names[i].second.calls,
                       names[i].second.calls == 1 ? "" : "s");
  }
  f.id = "blocking_os_call";
  f.severity = share >= kBlockingHighShare ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "The launching thread blocks in OS calls inside the loop: {} ({} of the loop){}{}",
      FormatDuration(waited), Percent(share, 1.0), names.empty() ? "" : ", mostly ",
      names.empty() ? std::string() : std::string(trace.str(names[0].first)));
  f.evidence.push_back({"os_wait_ns", "OS waits in the loop", waited, Unit::kDurationNs});
  f.evidence.push_back({"loop_ns", "Loop wall time", loop, Unit::kDurationNs});
  f.evidence.push_back({"os_wait_share_pct", "Share of the loop", 100.0 * share, Unit::kPercent});
  f.evidence.push_back(
      {"gpu_idle_while_waiting_ns", "GPU idle meanwhile", idle_while_waiting, Unit::kDurationNs});
  if (!top.empty()) f.evidence.push_back({"functions", "Functions", top});
  if (callers.calls > callers.without_chain) {
    f.evidence.push_back({"called_from", "Called from (call chains)", callers.Top(3)});
    f.evidence.push_back(
        {"calls_without_chain", "Calls without a call chain", callers.without_chain, Unit::kCount});
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Hit& x, const Hit& y) { return x.ns > y.ns; });
  std::string list;
  for (size_t i = 0; i < std::min(kBlockingListed, hits.size()); ++i) {
    list += fmt::format("{}{} ({})", i ? ", " : "", c.loop().WindowLabel(*hits[i].w),
                        FormatDuration(hits[i].ns));
  }
  if (hits.size() > kBlockingListed)
    list += fmt::format(", and {} more", hits.size() - kBlockingListed);
  f.where = fmt::format("launching thread {}:{}: {}", pid, tid, list);
  if (callers.calls > callers.without_chain) {
    f.where += fmt::format("; called from {}", callers.Top(1));
  }
  f.recommendation =
      "Keep the launching thread out of the OS's wait queues: poll sockets and queues without "
      "blocking (timeout 0) or from another thread, move file and network I/O off the loop, "
      "replace sleeps with events; a wait that must stay belongs where the GPU still has queued "
      "work (after the next launches, not before).";
  // The GPU had nothing to do while the thread that feeds it waited.
  f.estimated_savings_ns = idle_while_waiting;
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
