#include "analyses/threads/thread_ranges.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "analyses/threads/threads.h"
#include "base/name_pattern.h"
#include "base/stats.h"
#include "facts/intervals.h"
#include "facts/iterations.h"

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
  const IterationSet* set = context.loop().MainSet();
  const bool per_iteration = set != nullptr && !set->iterations.empty();
  std::vector<char> is_iteration;  // by range row: one of the main set's iteration ranges
  size_t slowest = 0;
  if (per_iteration) {
    res.per_iteration = true;
    is_iteration.assign(r.size(), 0);
    for (size_t i = 0; i < set->iterations.size(); ++i) {
      const int32_t row = set->iterations[i].range_row;
      if (row >= 0 && static_cast<size_t>(row) < r.size()) is_iteration[row] = 1;
      if (set->iterations[i].wall_ns() > set->iterations[slowest].wall_ns()) slowest = i;
    }
    res.slowest_iteration = set->iterations[slowest].index;
  }
  std::unordered_set<uint64_t> wanted;
  for (const ThreadRow& t : threads.threads) wanted.insert(Key(t.pid, t.tid));
  // Name patterns by index, each name's pattern made once; the accumulators by thread and pattern.
  std::vector<std::string> pattern_names;
  std::unordered_map<std::string, int32_t> pattern_index;
  std::vector<int32_t> pattern_of(trace.strings.size(), -1);
  std::unordered_map<uint64_t, std::unordered_map<int32_t, NameAcc>> acc;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!IsAnnotation(r.kind[i]) || (per_iteration && is_iteration[i])) continue;
    const uint64_t key = Key(r.pid[i], r.tid[i]);
    if (wanted.count(key) == 0) continue;
    int32_t& pattern = pattern_of[r.name[i].value];
    if (pattern < 0) {
      auto [it, inserted] = pattern_index.try_emplace(DigitRunsToN(trace.str(r.name[i])),
                                                      static_cast<int32_t>(pattern_names.size()));
      if (inserted) pattern_names.push_back(it->first);
      pattern = it->second;
    }
    NameAcc& a = acc[key][pattern];
    ++a.count;
    AppendToUnion(a.merged, r.start_ns[i], r.end_ns[i]);
  }
  for (const ThreadRow& t : threads.threads) {
    auto it = acc.find(Key(t.pid, t.tid));
    if (it == acc.end()) continue;
    std::vector<ThreadRangeRow> rows;
    for (const auto& [pattern, a] : it->second) {
      ThreadRangeRow row;
      row.pid = t.pid;
      row.tid = t.tid;
      row.thread = t.name;
      row.role = t.role;
      row.name = pattern_names[static_cast<size_t>(pattern)];
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
    // By total, then by name (the accumulators are unordered).
    std::sort(rows.begin(), rows.end(), [](const ThreadRangeRow& x, const ThreadRangeRow& y) {
      if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
      return x.name < y.name;
    });
    if (rows.size() > kRangeNamesPerThread) {
      res.names_left_out += static_cast<int64_t>(rows.size() - kRangeNamesPerThread);
      rows.resize(kRangeNamesPerThread);
    }
    for (ThreadRangeRow& row : rows) res.rows.push_back(std::move(row));
  }
  return res;
}

}  // namespace sightline
