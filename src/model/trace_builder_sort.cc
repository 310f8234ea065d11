// TraceBuilder::SortTables (trace_builder.h): every table into its row order, interval tables by
// (start asc, end desc), instants by time.
#include <algorithm>
#include <vector>

#include "model/mostly_sorted.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

// Reorders one column by a permutation (perm[i] = old row of new row i).
template <typename T>
void Permute(std::vector<T>& column, const std::vector<uint32_t>& perm) {
  std::vector<T> out;
  out.reserve(column.size());
  for (uint32_t old_row : perm) out.push_back(column[old_row]);
  column.swap(out);
}

// Row order by (start asc, end desc): an enclosing range sorts before what it encloses.
std::vector<uint32_t> StartOrder(const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                                 bool* already_sorted) {
  const size_t n = start.size();
  *already_sorted = true;
  for (size_t i = 1; i < n; ++i) {
    if (start[i] < start[i - 1] || (start[i] == start[i - 1] && end[i] > end[i - 1])) {
      *already_sorted = false;
      break;
    }
  }
  std::vector<uint32_t> perm;
  if (*already_sorted) return perm;
  // The keys are sorted next to the row numbers, not through them: an indirect sort reads two
  // columns at random rows for every comparison.
  struct Key {
    TimeNs start, end;
    uint32_t row;
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = Key{start[i], end[i], static_cast<uint32_t>(i)};
  auto less = [](const Key& a, const Key& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.row < b.row;
  };
  SortMostlySorted(keys, less);
  perm.resize(n);
  for (size_t i = 0; i < n; ++i) perm[i] = keys[i].row;
  return perm;
}

// An interval table in StartOrder. The depth and parent of ranges are computed after sorting, so
// they are still empty here and left alone.
template <typename Table>
void SortByStart(Table& table) {
  bool sorted;
  const std::vector<uint32_t> perm = StartOrder(table.start_ns, table.end_ns, &sorted);
  if (sorted) return;
  table.ForEachColumn([&](auto& column) {
    if (!column.empty()) Permute(column, perm);
  });
}

// Samples and memory events: by time, ties in arrival order.
template <typename Table>
void SortByTime(Table& table) {
  if (std::is_sorted(table.time_ns.begin(), table.time_ns.end())) return;
  std::vector<uint32_t> perm(table.size());
  for (uint32_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(),
                   [&](uint32_t x, uint32_t y) { return table.time_ns[x] < table.time_ns[y]; });
  table.ForEachColumn([&](auto& column) { Permute(column, perm); });
}

}  // namespace

void TraceBuilder::SortTables() {
  SortByStart(trace_.kernels);
  SortByStart(trace_.memops);
  SortByStart(trace_.api_calls);
  SortByStart(trace_.ranges);
  SortByStart(trace_.gil);
  SortByStart(trace_.os_calls);
  SortByStart(trace_.off_cpu);
  SortByStart(trace_.collectives);
  SortByTime(trace_.counters);
  SortByTime(trace_.memory_events);
  SortByTime(trace_.py_samples);
  SortByTime(trace_.cpu_samples);
  std::stable_sort(
      trace_.graph_creations.begin(), trace_.graph_creations.end(),
      [](const GraphCreation& a, const GraphCreation& b) { return a.time_ns < b.time_ns; });
  std::sort(trace_.devices.begin(), trace_.devices.end(),
            [](const DeviceInfo& a, const DeviceInfo& b) { return a.id < b.id; });
  std::sort(trace_.processes.begin(), trace_.processes.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) { return a.pid < b.pid; });
  std::sort(trace_.threads.begin(), trace_.threads.end(),
            [](const ThreadInfo& a, const ThreadInfo& b) {
              return a.pid != b.pid ? a.pid < b.pid : a.tid < b.tid;
            });
}

}  // namespace sightline
