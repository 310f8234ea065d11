#include "facts/launch_projection.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "model/thread_key.h"

namespace sightline {

void LaunchedWork::Add(const LaunchedWork& other) {
  kernel_count += other.kernel_count;
  memop_count += other.memop_count;
  kernel_time_ns += other.kernel_time_ns;
  memop_time_ns += other.memop_time_ns;
  first_start_ns = std::min(first_start_ns, other.first_start_ns);
  last_end_ns = std::max(last_end_ns, other.last_end_ns);
}

LaunchIndex::LaunchIndex(const Trace& trace, LaunchPoints points, const GraphAlignment* aligned)
    : trace_(trace) {
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
  kinds_.assign(work_.size(), PointKind::kLaunch);
  if (points == LaunchPoints::kLaunchAndCapture) AddSecondPoints(aligned);
}

// Merges each replayed kernel's second point (thread and time of its node's capture, else of its
// eager counterpart's launch) into the per-thread lists, keeping each list in time order.
void LaunchIndex::AddSecondPoints(const GraphAlignment* aligned) {
  const KernelTable& k = trace_.kernels;
  const ApiCallTable& api = trace_.api_calls;
  struct Point {
    int32_t thread;
    TimeNs time;
    uint32_t work;
    PointKind kind;
  };
  std::vector<Point> points;
  second_.assign(k.size(), PointKind::kLaunch);
  auto thread_id = [&](int32_t pid, int32_t tid) {
    return thread_ids_.try_emplace(ThreadKey(pid, tid), static_cast<int32_t>(thread_ids_.size()))
        .first->second;
  };
  const bool use_aligned = aligned != nullptr && aligned->counterpart.size() == k.size() &&
                           aligned->eager_run.size() == k.size();
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.capture_node[i] != 0 && k.capture_pid[i] >= 0 && k.capture_tid[i] >= 0) {
      points.push_back({thread_id(k.capture_pid[i], k.capture_tid[i]), k.capture_ns[i],
                        static_cast<uint32_t>(i), PointKind::kCapture});
      second_[i] = PointKind::kCapture;
      ++captured_kernels_;
      continue;
    }
    if (!use_aligned) continue;
    const int32_t e = aligned->counterpart[i];
    const int32_t run = aligned->eager_run[i];
    // The counterpart must be an eager kernel with a launching call (a graph kernel's "eager"
    // counterpart would chain points); the run must be one of the alignment's.
    if (e < 0 || static_cast<size_t>(e) >= k.size() || static_cast<size_t>(e) == i || run < 0 ||
        static_cast<size_t>(run) >= aligned->eager_runs.size()) {
      continue;
    }
    const int32_t call = k.launch_call[e];
    if (call == kNoRow || k.graph_node[e] != 0) continue;
    if (eager_run_.empty()) {
      eager_run_.assign(k.size(), -1);
      eager_runs_ = aligned->eager_runs;
    }
    points.push_back({thread_id(api.pid[call], api.tid[call]), api.start_ns[call],
                      static_cast<uint32_t>(i), PointKind::kAligned});
    second_[i] = PointKind::kAligned;
    eager_run_[i] = run;
    ++aligned_kernels_;
  }
  if (points.empty()) return;
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return std::tie(a.thread, a.time, a.work) < std::tie(b.thread, b.time, b.work);
  });
  const size_t threads = thread_ids_.size();
  offsets_.resize(threads + 1, offsets_.empty() ? 0 : offsets_.back());
  std::vector<uint32_t> work;
  std::vector<TimeNs> times;
  std::vector<PointKind> kinds;
  work.reserve(work_.size() + points.size());
  times.reserve(work.capacity());
  kinds.reserve(work.capacity());
  std::vector<uint32_t> offsets(threads + 1, 0);
  size_t p = 0;
  for (size_t t = 0; t < threads; ++t) {
    size_t e = offsets_[t];
    const size_t e_end = offsets_[t + 1];
    // Launches and second points of thread t, by time; at equal times the launch first.
    while (e < e_end || (p < points.size() && points[p].thread == static_cast<int32_t>(t))) {
      const bool take_second = p < points.size() && points[p].thread == static_cast<int32_t>(t) &&
                               (e == e_end || points[p].time < times_[e]);
      if (take_second) {
        work.push_back(points[p].work);
        times.push_back(points[p].time);
        kinds.push_back(points[p].kind);
        ++p;
      } else {
        work.push_back(work_[e]);
        times.push_back(times_[e]);
        kinds.push_back(PointKind::kLaunch);
        ++e;
      }
    }
    offsets[t + 1] = static_cast<uint32_t>(work.size());
  }
  work_ = std::move(work);
  times_ = std::move(times);
  kinds_ = std::move(kinds);
  offsets_ = std::move(offsets);
}

bool LaunchIndex::HoldsEagerRun(uint32_t work, TimeNs a, TimeNs b) const {
  if (work >= eager_run_.size() || eager_run_[work] < 0) return false;
  const GraphAlignment::EagerRun& run = eager_runs_[eager_run_[work]];
  return a <= run.first_launch_ns && b > run.last_launch_ns;
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

std::span<const PointKind> LaunchIndex::ThreadPointKinds(int32_t thread) const {
  if (thread < 0) return {};
  return std::span<const PointKind>(kinds_).subspan(offsets_[thread],
                                                    offsets_[thread + 1] - offsets_[thread]);
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
  AccumulateCounts(work, out);
  ExtendSpan(work, out);
}

void LaunchIndex::AccumulateCounts(uint32_t work, LaunchedWork& out) const {
  if (work < num_kernels_) {
    ++out.kernel_count;
    out.kernel_time_ns += trace_.kernels.end_ns[work] - trace_.kernels.start_ns[work];
  } else {
    const uint32_t row = work - num_kernels_;
    ++out.memop_count;
    out.memop_time_ns += trace_.memops.end_ns[row] - trace_.memops.start_ns[row];
  }
}

void LaunchIndex::ExtendSpan(uint32_t work, LaunchedWork& out) const {
  const bool kernel = work < num_kernels_;
  const uint32_t row = kernel ? work : work - num_kernels_;
  out.first_start_ns = std::min(
      out.first_start_ns, kernel ? trace_.kernels.start_ns[row] : trace_.memops.start_ns[row]);
  out.last_end_ns =
      std::max(out.last_end_ns, kernel ? trace_.kernels.end_ns[row] : trace_.memops.end_ns[row]);
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

std::pair<size_t, size_t> LaunchIndex::EntriesIn(int32_t thread, TimeNs a, TimeNs b) const {
  if (thread < 0 || b <= a) return {0, 0};
  const std::span<const TimeNs> times = ThreadTimes(thread);
  const auto lo = std::lower_bound(times.begin(), times.end(), a);
  const auto hi = std::lower_bound(lo, times.end(), b);
  return {static_cast<size_t>(lo - times.begin()), static_cast<size_t>(hi - times.begin())};
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
  // Per kernel with two points, at its first point: the innermost range then (-1: the point
  // counted in no range) and, for an aligned first point, the range its count stops below.
  struct First {
    int32_t range = -1;
    int32_t stop = -1;
    bool aligned = false;
  };
  std::unordered_map<uint32_t, First> first_point;
  // Aligned points count in the ranges from the innermost one around them up to, not including,
  // a stop: the innermost range holding their whole eager run, or the range around both points.
  // Such work waits here, per range and stop, and moves to the parent when a range closes, until
  // the parent is its stop; a range's own total takes it when it closes. (Plain work is added to
  // out.work and moves up on close; an aligned point cannot be taken back out of a range's span,
  // so it is not added where it does not belong.)
  std::unordered_map<uint32_t, std::map<int32_t, LaunchedWork>> pending;
  std::unordered_set<uint32_t> seen;
  // Per kernel with a second point: 1 once counted in kernels_inside, 2 once held at that point.
  std::vector<uint8_t> seen_points(
      index.captured_kernels() + index.aligned_kernels() > 0 ? trace.kernels.size() : 0, 0);
  for (size_t g0 = 0; g0 < n;) {
    size_t g1 = g0;
    while (g1 < n && keyed[g1].first == keyed[g0].first) ++g1;
    const int32_t first_row = rows[keyed[g0].second];
    const int32_t thread = index.ThreadOf(r.pid[first_row], r.tid[first_row]);
    const std::span<const uint32_t> work = index.ThreadWork(thread);
    const std::span<const TimeNs> times = index.ThreadTimes(thread);
    const std::span<const PointKind> kinds = index.ThreadPointKinds(thread);
    size_t k = 0;
    stack.clear();
    first_point.clear();

    // The nearest range on the stack that is `range` or one of its ancestors; -1 when none.
    auto open_ancestor = [&](int32_t range) {
      while (range >= 0 && !on_stack[range]) range = out.parent[range];
      return range;
    };
    // Closes the open ranges that end at or before t; a closed range's work counts for its parent.
    auto pop_closed = [&](TimeNs t) {
      while (!stack.empty() && r.end_ns[rows[stack.back()]] <= t) {
        const uint32_t done = stack.back();
        stack.pop_back();
        on_stack[done] = 0;
        const int32_t parent = stack.empty() ? -1 : static_cast<int32_t>(stack.back());
        if (parent >= 0) out.work[parent].Add(out.work[done]);
        auto p = pending.find(done);
        if (p == pending.end()) continue;
        std::map<int32_t, LaunchedWork> moved = std::move(p->second);
        pending.erase(p);
        for (const auto& [stop, w] : moved) out.work[done].Add(w);
        if (parent < 0) continue;
        moved.erase(parent);
        if (moved.empty()) continue;
        std::map<int32_t, LaunchedWork>& up = pending[static_cast<uint32_t>(parent)];
        if (up.empty()) {
          up = std::move(moved);
        } else {
          for (const auto& [stop, w] : moved) up[stop].Add(w);
        }
      }
    };
    // An aligned point of w at the top of the stack: the innermost open range that holds its
    // whole eager run (the open ranges nest, so those that hold it are the bottom of the stack).
    auto run_holder = [&](uint32_t w) -> int32_t {
      const auto it = std::partition_point(stack.begin(), stack.end(), [&](uint32_t s) {
        return index.HoldsEagerRun(w, r.start_ns[rows[s]], r.end_ns[rows[s]]);
      });
      return it == stack.begin() ? -1 : static_cast<int32_t>(*(it - 1));
    };
    // The deeper of two open ranges (one is the other or its ancestor); -1 counts as outermost.
    auto deeper = [&](int32_t x, int32_t y) {
      if (x < 0) return y;
      if (y < 0) return x;
      return out.depth[x] >= out.depth[y] ? x : y;
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
        if (stack.empty()) {
          ++k;
          continue;
        }
        const uint32_t w = work[k];
        const PointKind kind = kinds[k];
        const auto inner = static_cast<int32_t>(stack.back());
        ++k;
        if (!index.HasSecondPoint(w)) {
          index.Accumulate(w, out.work[inner]);
          ++(index.IsKernel(w) ? out.kernels_inside : out.memops_inside);
          continue;
        }
        auto [it, first] = first_point.try_emplace(w);
        First& f = it->second;
        if (kind == PointKind::kAligned) {
          int32_t stop = run_holder(w);
          if (!first && f.range >= 0) stop = deeper(stop, open_ancestor(f.range));
          if (first) {
            f.range = stop == inner ? -1 : inner;
            f.stop = stop;
            f.aligned = true;
          }
          if (stop == inner) continue;  // the innermost range is the step, or holds both points
          index.AccumulateCounts(w, pending[static_cast<uint32_t>(inner)][stop]);
        } else {
          if (kind == PointKind::kLaunch) {
            index.Accumulate(w, out.work[inner]);
          } else {
            index.AccumulateCounts(w, out.work[inner]);
          }
          if (first) {
            f.range = inner;
          } else if (f.range >= 0) {
            // The innermost open range around both points would count the kernel twice, once
            // through each: it gives one back. An aligned first point counted only below its
            // stop, so above the stop the kernel counts once already: it is given back there.
            const int32_t both = open_ancestor(f.range);
            if (both >= 0 && (!f.aligned || f.stop < 0 || out.depth[both] > out.depth[f.stop])) {
              index.Remove(w, out.work[both]);
              if (f.aligned && f.stop >= 0) index.AccumulateCounts(w, out.work[f.stop]);
            }
          }
        }
        // Counted once over both points, which may lie on two threads.
        if ((seen_points[w] & 1) == 0) ++out.kernels_inside;
        if (kind != PointKind::kLaunch && (seen_points[w] & 2) == 0) {
          ++(kind == PointKind::kCapture ? out.kernels_by_capture : out.kernels_by_alignment);
        }
        seen_points[w] |= kind != PointKind::kLaunch ? 3 : 1;
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
        const auto [lo, hi] = index.EntriesIn(thread, r.start_ns[row], r.end_ns[row]);
        for (size_t e = lo; e < hi; ++e) {
          const uint32_t w = work[e];
          if (!index.PointCounts(w, kinds[e], r.start_ns[row], r.end_ns[row])) continue;
          if (kinds[e] == PointKind::kLaunch) index.ExtendSpan(w, out.work[i]);
          // Both points inside: counted once.
          if (!index.HasSecondPoint(w) || seen.insert(w).second) {
            index.AccumulateCounts(w, out.work[i]);
          }
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
