#include "analyses/thread_ranges.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "analyses/intervals.h"
#include "analyses/iterations.h"
#include "analyses/threads.h"
#include "base/name_pattern.h"
#include "base/stats.h"

namespace sightline {
namespace {

uint64_t Key(int32_t pid, int32_t tid) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
}

bool IsAnnotation(RangeKind kind) {
  return kind == RangeKind::kNvtxPushPop || kind == RangeKind::kNvtxStartEnd ||
         kind == RangeKind::kUserAnnotation;
}

struct NameAcc {
  int64_t count = 0;
  std::vector<Interval> merged;  // ranges arrive by start: AppendToUnion keeps it disjoint
};

}  // namespace

ThreadRangesResult ComputeThreadRanges(AnalysisContext& context, const ThreadsResult& threads) {
  ThreadRangesResult res;
  const Trace& trace = context.trace();
  const RangeTable& r = trace.ranges;
  const IterationSet* set = context.MainSet();
  const bool per_iteration = set != nullptr && !set->iterations.empty();
  std::set<int32_t> iteration_rows;
  size_t slowest = 0;
  if (per_iteration) {
    res.per_iteration = true;
    for (size_t i = 0; i < set->iterations.size(); ++i) {
      iteration_rows.insert(set->iterations[i].range_row);
      if (set->iterations[i].wall_ns() > set->iterations[slowest].wall_ns()) slowest = i;
    }
    res.slowest_iteration = set->iterations[slowest].index;
  }
  std::set<uint64_t> wanted;
  for (const ThreadRow& t : threads.threads) wanted.insert(Key(t.pid, t.tid));
  // By thread, then by name pattern.
  std::map<uint64_t, std::map<std::string, NameAcc>> acc;
  std::vector<const std::string*> patterns(trace.strings.size(), nullptr);
  std::set<std::string> pattern_pool;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!IsAnnotation(r.kind[i]) || iteration_rows.count(static_cast<int32_t>(i)) != 0) continue;
    const uint64_t key = Key(r.pid[i], r.tid[i]);
    if (wanted.count(key) == 0) continue;
    const std::string*& pattern = patterns[r.name[i].value];
    if (pattern == nullptr)
      pattern = &*pattern_pool.insert(DigitRunsToN(trace.str(r.name[i]))).first;
    NameAcc& a = acc[key][*pattern];
    ++a.count;
    AppendToUnion(a.merged, r.start_ns[i], r.end_ns[i]);
  }
  for (const ThreadRow& t : threads.threads) {
    auto it = acc.find(Key(t.pid, t.tid));
    if (it == acc.end()) continue;
    std::vector<ThreadRangeRow> rows;
    for (const auto& [name, a] : it->second) {
      ThreadRangeRow row;
      row.pid = t.pid;
      row.tid = t.tid;
      row.thread = t.name;
      row.role = t.role;
      row.name = name;
      row.count = a.count;
      row.total_ns = TotalLength(a.merged);
      if (per_iteration) {
        std::vector<int64_t> values;
        values.reserve(set->iterations.size());
        for (const Iteration& iter : set->iterations) {
          values.push_back(BusyWithin(a.merged, iter.start_ns, iter.end_ns));
        }
        row.per_iteration.slowest_ns = values[slowest];
        row.per_iteration.median_ns = Median(std::move(values));
      }
      rows.push_back(std::move(row));
    }
    std::stable_sort(
        rows.begin(), rows.end(),
        [](const ThreadRangeRow& x, const ThreadRangeRow& y) { return x.total_ns > y.total_ns; });
    if (rows.size() > kRangeNamesPerThread) {
      res.names_left_out += static_cast<int64_t>(rows.size() - kRangeNamesPerThread);
      rows.resize(kRangeNamesPerThread);
    }
    for (ThreadRangeRow& row : rows) res.rows.push_back(std::move(row));
  }
  return res;
}

}  // namespace sightline
