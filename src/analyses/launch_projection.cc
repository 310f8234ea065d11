#include "analyses/launch_projection.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace sightline {
namespace {

int64_t ThreadKey(int32_t pid, int32_t tid) {
  return (static_cast<int64_t>(pid) << 32) | static_cast<uint32_t>(tid);
}

}  // namespace

void LaunchedWork::Add(const LaunchedWork& other) {
  kernel_count += other.kernel_count;
  memop_count += other.memop_count;
  kernel_time_ns += other.kernel_time_ns;
  memop_time_ns += other.memop_time_ns;
  first_start_ns = std::min(first_start_ns, other.first_start_ns);
  last_end_ns = std::max(last_end_ns, other.last_end_ns);
}

LaunchIndex::LaunchIndex(const Trace& trace, LaunchPoints points) : trace_(trace) {
  const KernelTable& k = trace.kernels;
  const MemOpTable& m = trace.memops;
  const ApiCallTable& a = trace.api_calls;
  num_kernels_ = static_cast<uint32_t>(k.size());

  // Counting sort of the linked work by launch-call row: the API table is sorted by start, so
  // this orders the work by launch time in O(work + calls).
  std::vector<uint32_t> pos(a.size() + 1, 0);
  for (int32_t call : k.launch_call) {
    if (call == kNoRow) {
      ++unlinked_kernels_;
    } else {
      ++pos[call + 1];
    }
  }
  for (int32_t call : m.launch_call) {
    if (call == kNoRow) {
      ++unlinked_memops_;
    } else {
      ++pos[call + 1];
    }
  }
  for (size_t i = 1; i < pos.size(); ++i) pos[i] += pos[i - 1];
  const size_t linked = pos.back();
  std::vector<uint32_t> by_call(linked);
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.launch_call[i] != kNoRow) by_call[pos[k.launch_call[i]]++] = static_cast<uint32_t>(i);
  }
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.launch_call[i] != kNoRow) {
      by_call[pos[m.launch_call[i]]++] = num_kernels_ + static_cast<uint32_t>(i);
    }
  }
  std::vector<uint32_t>().swap(pos);

  // Dense thread ids; a stable counting sort by thread keeps launch order within a thread. Most
  // traces launch from one thread, which needs no second pass.
  auto call_of = [&](uint32_t work) {
    return work < num_kernels_ ? k.launch_call[work] : m.launch_call[work - num_kernels_];
  };
  int64_t last_key = 0;
  int32_t last_id = -1;
  auto thread_of = [&](uint32_t work) {
    const int32_t call = call_of(work);
    const int64_t key = ThreadKey(a.pid[call], a.tid[call]);
    if (last_id < 0 || key != last_key) {
      auto [it, inserted] = thread_ids_.try_emplace(key, static_cast<int32_t>(thread_ids_.size()));
      last_key = key;
      last_id = it->second;
    }
    return last_id;
  };
  std::vector<uint32_t> counts;
  for (uint32_t work : by_call) {
    const int32_t t = thread_of(work);
    if (static_cast<size_t>(t) >= counts.size()) counts.resize(t + 1, 0);
    ++counts[t];
  }
  offsets_.assign(counts.size() + 1, 0);
  for (size_t t = 0; t < counts.size(); ++t) offsets_[t + 1] = offsets_[t] + counts[t];
  if (counts.size() <= 1) {
    work_ = std::move(by_call);
  } else {
    std::vector<uint32_t> next(offsets_.begin(), offsets_.end() - 1);
    work_.resize(linked);
    for (uint32_t work : by_call) work_[next[thread_of(work)]++] = work;
  }
  times_.resize(work_.size());
  for (size_t e = 0; e < work_.size(); ++e) times_[e] = LaunchTime(work_[e]);
  is_capture_.assign(work_.size(), 0);
  if (points == LaunchPoints::kLaunchAndCapture) AddCapturePoints();
}

// Merges each replayed kernel's capture point (thread and time of its node's capture) into the
// per-thread lists, keeping each list in time order.
void LaunchIndex::AddCapturePoints() {
  const KernelTable& k = trace_.kernels;
  struct Point {
    int32_t thread;
    TimeNs time;
    uint32_t work;
  };
  std::vector<Point> points;
  captured_.assign(k.size(), 0);
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.capture_node[i] == 0 || k.capture_pid[i] < 0 || k.capture_tid[i] < 0) continue;
    const int64_t key = ThreadKey(k.capture_pid[i], k.capture_tid[i]);
    auto [it, inserted] = thread_ids_.try_emplace(key, static_cast<int32_t>(thread_ids_.size()));
    points.push_back({it->second, k.capture_ns[i], static_cast<uint32_t>(i)});
    captured_[i] = 1;
  }
  captured_kernels_ = static_cast<int64_t>(points.size());
  if (points.empty()) return;
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return std::tie(a.thread, a.time, a.work) < std::tie(b.thread, b.time, b.work);
  });
  const size_t threads = thread_ids_.size();
  offsets_.resize(threads + 1, offsets_.empty() ? 0 : offsets_.back());
  std::vector<uint32_t> work;
  std::vector<TimeNs> times;
  std::vector<uint8_t> is_capture;
  work.reserve(work_.size() + points.size());
  times.reserve(work.capacity());
  is_capture.reserve(work.capacity());
  std::vector<uint32_t> offsets(threads + 1, 0);
  size_t p = 0;
  for (size_t t = 0; t < threads; ++t) {
    size_t e = offsets_[t];
    const size_t e_end = offsets_[t + 1];
    // Launches and captures of thread t, by time; at equal times the launch first.
    while (e < e_end || (p < points.size() && points[p].thread == static_cast<int32_t>(t))) {
      const bool take_capture = p < points.size() && points[p].thread == static_cast<int32_t>(t) &&
                                (e == e_end || points[p].time < times_[e]);
      if (take_capture) {
        work.push_back(points[p].work);
        times.push_back(points[p].time);
        is_capture.push_back(1);
        ++p;
      } else {
        work.push_back(work_[e]);
        times.push_back(times_[e]);
        is_capture.push_back(0);
        ++e;
      }
    }
    offsets[t + 1] = static_cast<uint32_t>(work.size());
  }
  work_ = std::move(work);
  times_ = std::move(times);
  is_capture_ = std::move(is_capture);
  offsets_ = std::move(offsets);
}

int32_t LaunchIndex::ThreadOf(int32_t pid, int32_t tid) const {
  auto it = thread_ids_.find(ThreadKey(pid, tid));
  return it == thread_ids_.end() ? -1 : it->second;
}

std::span<const uint32_t> LaunchIndex::ThreadWork(int32_t thread) const {
  if (thread < 0) return {};
  return std::span<const uint32_t>(work_).subspan(offsets_[thread],
                                                  offsets_[thread + 1] - offsets_[thread]);
}

std::span<const TimeNs> LaunchIndex::ThreadTimes(int32_t thread) const {
  if (thread < 0) return {};
  return std::span<const TimeNs>(times_).subspan(offsets_[thread],
                                                 offsets_[thread + 1] - offsets_[thread]);
}

std::span<const uint8_t> LaunchIndex::ThreadCapturePoints(int32_t thread) const {
  if (thread < 0) return {};
  return std::span<const uint8_t>(is_capture_)
      .subspan(offsets_[thread], offsets_[thread + 1] - offsets_[thread]);
}

std::span<const uint32_t> LaunchIndex::LaunchedIn(int32_t thread, TimeNs a, TimeNs b) const {
  if (thread < 0 || b <= a) return {};
  const std::span<const uint32_t> work = ThreadWork(thread);
  const std::span<const TimeNs> times = ThreadTimes(thread);
  const auto lo = std::lower_bound(times.begin(), times.end(), a);
  const auto hi = std::lower_bound(lo, times.end(), b);
  return work.subspan(lo - times.begin(), hi - lo);
}

void LaunchIndex::Accumulate(uint32_t work, LaunchedWork& out) const {
  TimeNs start, end;
  if (work < num_kernels_) {
    start = trace_.kernels.start_ns[work];
    end = trace_.kernels.end_ns[work];
    ++out.kernel_count;
    out.kernel_time_ns += end - start;
  } else {
    const uint32_t row = work - num_kernels_;
    start = trace_.memops.start_ns[row];
    end = trace_.memops.end_ns[row];
    ++out.memop_count;
    out.memop_time_ns += end - start;
  }
  out.first_start_ns = std::min(out.first_start_ns, start);
  out.last_end_ns = std::max(out.last_end_ns, end);
}

void LaunchIndex::Remove(uint32_t work, LaunchedWork& out) const {
  if (work < num_kernels_) {
    --out.kernel_count;
    out.kernel_time_ns -= trace_.kernels.end_ns[work] - trace_.kernels.start_ns[work];
  } else {
    const uint32_t row = work - num_kernels_;
    --out.memop_count;
    out.memop_time_ns -= trace_.memops.end_ns[row] - trace_.memops.start_ns[row];
  }
}

RangeProjection ProjectRanges(const Trace& trace, const LaunchIndex& index,
                              std::span<const int32_t> rows) {
  const RangeTable& r = trace.ranges;
  const size_t n = rows.size();
  RangeProjection out;
  out.work.resize(n);
  out.parent.assign(n, -1);
  out.depth.assign(n, 0);

  // Group the rows by thread; (key, position) keeps table order (start asc, end desc) inside a
  // thread, so an enclosing range comes before what it encloses.
  std::vector<std::pair<int64_t, uint32_t>> keyed(n);
  for (size_t i = 0; i < n; ++i) {
    keyed[i] = {ThreadKey(r.pid[rows[i]], r.tid[rows[i]]), static_cast<uint32_t>(i)};
  }
  std::sort(keyed.begin(), keyed.end());

  std::vector<uint32_t> stack;
  std::vector<uint8_t> on_stack(n, 0);
  std::unordered_map<uint32_t, uint32_t> first_range;  // kernel -> range at its first point
  std::unordered_set<uint32_t> seen;
  // Per kernel with a capture point: 1 once counted in kernels_inside, 2 once held at its capture.
  std::vector<uint8_t> seen_points(index.captured_kernels() > 0 ? trace.kernels.size() : 0, 0);
  for (size_t g0 = 0; g0 < n;) {
    size_t g1 = g0;
    while (g1 < n && keyed[g1].first == keyed[g0].first) ++g1;
    const int32_t first_row = rows[keyed[g0].second];
    const int32_t thread = index.ThreadOf(r.pid[first_row], r.tid[first_row]);
    const std::span<const uint32_t> work = index.ThreadWork(thread);
    const std::span<const TimeNs> times = index.ThreadTimes(thread);
    const std::span<const uint8_t> is_capture = index.ThreadCapturePoints(thread);
    size_t k = 0;
    stack.clear();
    // A kernel with both its launch and its capture on this thread: the innermost range at its
    // first point. At the second, the innermost range still open around both (the first range's
    // nearest ancestor on the stack) would count it twice, once through each point: it gives
    // one back.
    first_range.clear();

    // Closes the open ranges that end at or before t; a closed range's work counts for its parent.
    auto pop_closed = [&](TimeNs t) {
      while (!stack.empty() && r.end_ns[rows[stack.back()]] <= t) {
        const uint32_t done = stack.back();
        stack.pop_back();
        on_stack[done] = 0;
        if (!stack.empty()) out.work[stack.back()].Add(out.work[done]);
      }
    };
    // Attributes the work launched (or captured) before t to the innermost open range.
    auto consume_until = [&](TimeNs t) {
      while (k < work.size() && times[k] < t) {
        if (stack.empty()) {
          k = std::lower_bound(times.begin() + static_cast<std::ptrdiff_t>(k), times.end(), t) -
              times.begin();
          break;
        }
        pop_closed(times[k]);
        if (!stack.empty()) {
          const uint32_t w = work[k];
          const uint32_t inner = stack.back();
          index.Accumulate(w, out.work[inner]);
          if (!index.HasCapturePoint(w)) {
            ++(index.IsKernel(w) ? out.kernels_inside : out.memops_inside);
          } else {
            auto [it, first] = first_range.try_emplace(w, inner);
            if (!first) {
              // The nearest ancestor-or-self of the first range that is still open holds both
              // points.
              int32_t a = static_cast<int32_t>(it->second);
              while (a >= 0 && !on_stack[a]) a = out.parent[a];
              if (a >= 0) index.Remove(w, out.work[a]);
            }
            // Counted once over both points, which may lie on two threads.
            if ((seen_points[w] & 1) == 0) ++out.kernels_inside;
            if (is_capture[k] && (seen_points[w] & 2) == 0) ++out.kernels_by_capture;
            seen_points[w] |= is_capture[k] ? 3 : 1;
          }
        }
        ++k;
      }
    };

    for (size_t g = g0; g < g1; ++g) {
      const uint32_t i = keyed[g].second;
      const int32_t row = rows[i];
      consume_until(r.start_ns[row]);
      pop_closed(r.start_ns[row]);
      if (!stack.empty() && r.end_ns[row] > r.end_ns[rows[stack.back()]]) {
        // Overlaps the open range without nesting: a sibling of it, summed directly.
        out.parent[i] = out.parent[stack.back()];
        out.depth[i] = out.depth[stack.back()];
        seen.clear();
        for (uint32_t w : index.LaunchedIn(thread, r.start_ns[row], r.end_ns[row])) {
          if (index.HasCapturePoint(w) && !seen.insert(w).second) continue;  // both points inside
          index.Accumulate(w, out.work[i]);
        }
        continue;
      }
      if (!stack.empty()) {
        out.parent[i] = static_cast<int32_t>(stack.back());
        out.depth[i] = out.depth[stack.back()] + 1;
      }
      stack.push_back(i);
      on_stack[i] = 1;
    }
    consume_until(INT64_MAX);
    pop_closed(INT64_MAX);
    g0 = g1;
  }
  return out;
}

}  // namespace sightline
