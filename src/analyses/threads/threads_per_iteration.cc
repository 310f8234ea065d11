#include "analyses/threads/threads_per_iteration.h"

#include "analyses/threads/threads.h"
#include "base/stats.h"
#include "facts/intervals.h"
#include "facts/iterations.h"

namespace sightline {
namespace {

PerIterationPart Measure(const std::vector<Interval>& merged, const IterationSet& set,
                         size_t slowest) {
  PerIterationPart p;
  if (merged.empty()) return p;
  std::vector<int64_t> values;
  values.reserve(set.iterations.size());
  for (const Iteration& it : set.iterations) {
    values.push_back(BusyWithin(merged, it.start_ns, it.end_ns));
  }
  p.slowest_ns = values[slowest];
  p.median_ns = Median(std::move(values));
  return p;
}

bool Any(const PerIterationPart& p) { return p.median_ns > 0 || p.slowest_ns > 0; }

}  // namespace

ThreadsPerIterationResult ComputeThreadsPerIteration(AnalysisContext& context,
                                                     const ThreadsResult& threads) {
  ThreadsPerIterationResult res;
  const IterationSet* set = context.loop().MainSet();
  if (set == nullptr || set->iterations.empty()) return res;
  if (!threads.has_gil && !threads.has_os_calls && !threads.has_off_cpu) return res;
  size_t slowest = 0;
  for (size_t i = 1; i < set->iterations.size(); ++i) {
    if (set->iterations[i].wall_ns() > set->iterations[slowest].wall_ns()) slowest = i;
  }
  res.slowest_iteration = set->iterations[slowest].index;
  res.slowest_wall_ns = set->iterations[slowest].wall_ns();
  res.median_wall_ns = set->wall.median;
  for (const ThreadRow& t : threads.threads) {
    ThreadPerIteration row;
    row.pid = t.pid;
    row.tid = t.tid;
    row.name = t.name;
    row.role = t.role;
    if (threads.has_gil) {
      row.gil_held = Measure(context.host().GilHeld(t.pid, t.tid), *set, slowest);
      row.gil_waited = Measure(context.host().GilWaited(t.pid, t.tid), *set, slowest);
    }
    if (threads.has_os_calls || threads.has_off_cpu) {
      const ThreadWaits& w = context.host().Waits(t.pid, t.tid);
      if (threads.has_os_calls) row.os_wait = Measure(w.os_wait, *set, slowest);
      if (threads.has_off_cpu) row.off_cpu = Measure(w.off_cpu, *set, slowest);
    }
    if (Any(row.gil_held) || Any(row.gil_waited) || Any(row.os_wait) || Any(row.off_cpu)) {
      res.threads.push_back(std::move(row));
    }
  }
  return res;
}

}  // namespace sightline
