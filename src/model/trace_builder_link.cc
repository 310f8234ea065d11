// What TraceBuilder::Finish derives once the tables are sorted (trace_builder.h): the launching
// call of every kernel and memory operation, range nesting, thread roles, the trace's span.
#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/mostly_sorted.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

// The API calls with a correlation id, ordered by (correlation, pid, row), and the search for the
// call that launched a piece of GPU work.
class LaunchIndex {
 public:
  explicit LaunchIndex(const ApiCallTable& a) : a_(a) {
    // The table is in start order, and profilers hand out correlation ids in call order, so it is
    // that order already, or nearly (SortMostlySorted).
    rows_.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      if (a.correlation[i] >= 0) rows_.push_back(static_cast<int32_t>(i));
    }
    SortMostlySorted(rows_, [&a](int32_t x, int32_t y) {
      if (a.correlation[x] != a.correlation[y]) return a.correlation[x] < a.correlation[y];
      if (a.pid[x] != a.pid[y]) return a.pid[x] < a.pid[y];
      return x < y;
    });
  }

  // The launching call for (correlation, pid), kNoRow when none; pid -1 (unknown, as in Kineto
  // GPU events) matches when every call with that correlation id comes from one process.
  int32_t Find(int64_t correlation, int32_t pid) {
    if (correlation < 0) return kNoRow;
    const size_t n = rows_.size();
    const size_t lo = LowerBound(correlation);
    if (lo == n || Corr(lo) != correlation) return kNoRow;
    if (pid >= 0) {
      for (size_t i = lo; i < n && Corr(i) == correlation; ++i) {
        if (a_.pid[rows_[i]] == pid) return rows_[i];
      }
      return kNoRow;
    }
    if (lo + 1 < n && Corr(lo + 1) == correlation && a_.pid[rows_[lo + 1]] != a_.pid[rows_[lo]]) {
      ++ambiguous_;
      return kNoRow;
    }
    return rows_[lo];
  }

  // Searches with pid -1 that matched calls of several processes.
  int64_t ambiguous() const { return ambiguous_; }

 private:
  int64_t Corr(size_t i) const { return a_.correlation[rows_[i]]; }

  // The first position in rows_ whose correlation is >= c. GPU work comes in start order and its
  // correlation ids mostly grow, so the search gallops from the previous answer instead of
  // bisecting all rows (the same position as std::lower_bound, found in a few steps).
  size_t LowerBound(int64_t c) {
    const size_t n = rows_.size();
    if (n == 0) return 0;
    size_t lo, hi;  // the answer is in [lo, hi]
    if (Corr(hint_) < c) {
      size_t step = 1;
      while (hint_ + step < n && Corr(hint_ + step) < c) step *= 2;
      lo = hint_ + step / 2 + 1;
      hi = std::min(hint_ + step, n);
    } else {
      size_t step = 1;
      while (step <= hint_ && Corr(hint_ - step) >= c) step *= 2;
      lo = step <= hint_ ? hint_ - step + 1 : 0;
      hi = hint_ - step / 2;
    }
    const ApiCallTable& a = a_;
    const size_t at = static_cast<size_t>(
        std::lower_bound(rows_.begin() + lo, rows_.begin() + hi, c,
                         [&a](int32_t row, int64_t v) { return a.correlation[row] < v; }) -
        rows_.begin());
    hint_ = std::min(at, n - 1);
    return at;
  }

  const ApiCallTable& a_;
  std::vector<int32_t> rows_;
  size_t hint_ = 0;
  int64_t ambiguous_ = 0;
};

// Sets launch_call of every row of `table` (kernels or memory operations), and its pid where it
// was unknown; returns how many rows found no launching call.
template <typename Table>
int64_t LinkToLaunches(Table& table, const ApiCallTable& a, LaunchIndex& index) {
  int64_t unlinked = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    const int32_t row = index.Find(table.correlation[i], table.pid[i]);
    table.launch_call[i] = row;
    if (row == kNoRow) {
      ++unlinked;
    } else if (table.pid[i] < 0) {
      table.pid[i] = a.pid[row];
    }
  }
  return unlinked;
}

// One launch call starts one kernel, but for a CUDA graph's launch: more kernels on one call mean
// repeated correlation ids (a broken or edited trace). Returns how many kernels were such extras.
int64_t CountSharedLaunches(const Trace& trace) {
  const ApiCallTable& a = trace.api_calls;
  const KernelTable& k = trace.kernels;
  int64_t shared_launch = 0;
  std::vector<uint8_t> claimed(a.size(), 0);
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t row = k.launch_call[i];
    if (row == kNoRow) continue;
    // cudaGraphLaunch / cuGraphLaunch class as launches; a graph's kernels share its id.
    const size_t r = static_cast<size_t>(row);
    if (a.api_class[r] == ApiClass::kGraph ||
        trace.strings.Get(a.name[r]).find("Graph") != std::string_view::npos) {
      continue;
    }
    if (claimed[r]) {
      ++shared_launch;
    } else {
      claimed[r] = 1;
    }
  }
  return shared_launch;
}

}  // namespace

void TraceBuilder::LinkLaunches() {
  const ApiCallTable& a = trace_.api_calls;
  LaunchIndex index(a);
  const int64_t unlinked_kernels = LinkToLaunches(trace_.kernels, a, index);
  const int64_t shared_launch = CountSharedLaunches(trace_);
  const int64_t unlinked_memops = LinkToLaunches(trace_.memops, a, index);
  Diagnostics& d = trace_.diagnostics;
  d.Add(DiagCode::kKernelWithoutLaunch, unlinked_kernels);
  d.Add(DiagCode::kMemopWithoutLaunch, unlinked_memops);
  d.Add(DiagCode::kAmbiguousCorrelation, index.ambiguous());
  d.Add(DiagCode::kSharedLaunchCall, shared_launch);
  // Kernel launches and not one kernel: the GPU side was not read (a table renamed, or of a layout
  // this reader does not know); a GPU that looks idle would be a wrong conclusion.
  if (trace_.kernels.size() == 0) {
    int64_t launches = 0;
    for (size_t i = 0; i < a.size(); ++i) launches += a.api_class[i] == ApiClass::kLaunch;
    d.Add(DiagCode::kLaunchesWithoutKernels, launches);
  }
}

void TraceBuilder::ComputeRangeNesting() {
  RangeTable& r = trace_.ranges;
  r.depth.assign(r.size(), 0);
  r.parent.assign(r.size(), kNoRow);
  std::unordered_map<int64_t, std::vector<int32_t>> stacks;  // (pid, tid) -> open ranges
  int64_t crossing = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    const int64_t key = (static_cast<int64_t>(r.pid[i]) << 32) ^ static_cast<uint32_t>(r.tid[i]);
    std::vector<int32_t>& stack = stacks[key];
    while (!stack.empty() && r.end_ns[stack.back()] <= r.start_ns[i]) stack.pop_back();
    if (!stack.empty() && r.end_ns[i] > r.end_ns[stack.back()]) {
      // Overlaps its predecessor without nesting (start/end ranges may do this): a sibling.
      ++crossing;
      r.parent[i] = r.parent[stack.back()];
      r.depth[i] = r.depth[stack.back()];
      continue;
    }
    if (!stack.empty()) {
      r.parent[i] = stack.back();
      r.depth[i] = r.depth[stack.back()] + 1;
    }
    stack.push_back(static_cast<int32_t>(i));
  }
  trace_.diagnostics.Add(DiagCode::kRangeNotNested, crossing);
}

void TraceBuilder::ComputeThreadRoles() {
  // Launching threads: those with a launch call. A launching thread that no importer listed stays
  // unlisted (HostFacts::LaunchingThreads finds every one from the calls).
  if (trace_.threads.empty()) return;
  std::vector<std::pair<int32_t, int32_t>> launching;
  const ApiCallTable& a = trace_.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.api_class[i] != ApiClass::kLaunch) continue;
    const std::pair<int32_t, int32_t> key{a.pid[i], a.tid[i]};
    if (launching.empty() || launching.back() != key) launching.push_back(key);  // runs of one
  }
  std::sort(launching.begin(), launching.end());
  launching.erase(std::unique(launching.begin(), launching.end()), launching.end());
  std::vector<ThreadInfo>& threads = trace_.threads;
  for (ThreadInfo& t : threads) {
    if (IsProfilerThreadName(t.name)) {
      t.role = ThreadRole::kProfiler;
    } else if (std::binary_search(launching.begin(), launching.end(),
                                  std::make_pair(t.pid, t.tid))) {
      t.role = ThreadRole::kLaunching;
    } else {
      t.role = ThreadRole::kOther;
    }
  }
}

void TraceBuilder::ComputeSpan() {
  TimeNs lo = INT64_MAX, hi = INT64_MIN;
  auto span = [&](const std::vector<TimeNs>& s, const std::vector<TimeNs>& e) {
    if (s.empty()) return;
    lo = std::min(lo, s.front());  // tables are sorted by start
    for (TimeNs t : e) hi = std::max(hi, t);
  };
  span(trace_.kernels.start_ns, trace_.kernels.end_ns);
  span(trace_.memops.start_ns, trace_.memops.end_ns);
  span(trace_.api_calls.start_ns, trace_.api_calls.end_ns);
  span(trace_.ranges.start_ns, trace_.ranges.end_ns);
  if (!trace_.gil.start_ns.empty()) {  // not sorted with the others: take the minimum too
    lo = std::min(lo, trace_.gil.start_ns.front());
    for (TimeNs t : trace_.gil.end_ns) hi = std::max(hi, t);
  }
  if (lo == INT64_MAX) lo = hi = 0;
  trace_.begin_ns_ = lo;
  trace_.end_ns_ = hi;
}

}  // namespace sightline
