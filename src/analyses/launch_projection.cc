#include "analyses/launch_projection.h"

#include <algorithm>
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

LaunchIndex::LaunchIndex(const Trace& trace) : trace_(trace) {
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
    return;
  }
  std::vector<uint32_t> next(offsets_.begin(), offsets_.end() - 1);
  work_.resize(linked);
  for (uint32_t work : by_call) work_[next[thread_of(work)]++] = work;
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

std::span<const uint32_t> LaunchIndex::LaunchedIn(int32_t thread, TimeNs a, TimeNs b) const {
  if (thread < 0 || b <= a) return {};
  const std::span<const uint32_t> work = ThreadWork(thread);
  auto before = [this](TimeNs t) { return [this, t](uint32_t w) { return LaunchTime(w) < t; }; };
  const auto lo = std::partition_point(work.begin(), work.end(), before(a));
  const auto hi = std::partition_point(lo, work.end(), before(b));
  return work.subspan(lo - work.begin(), hi - lo);
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
  for (size_t g0 = 0; g0 < n;) {
    size_t g1 = g0;
    while (g1 < n && keyed[g1].first == keyed[g0].first) ++g1;
    const int32_t first_row = rows[keyed[g0].second];
    const int32_t thread = index.ThreadOf(r.pid[first_row], r.tid[first_row]);
    const std::span<const uint32_t> work = index.ThreadWork(thread);
    size_t k = 0;
    stack.clear();

    // Closes the open ranges that end at or before t; a closed range's work counts for its parent.
    auto pop_closed = [&](TimeNs t) {
      while (!stack.empty() && r.end_ns[rows[stack.back()]] <= t) {
        const uint32_t done = stack.back();
        stack.pop_back();
        if (!stack.empty()) out.work[stack.back()].Add(out.work[done]);
      }
    };
    // Attributes the work launched before t to the innermost open range.
    auto consume_until = [&](TimeNs t) {
      while (k < work.size() && index.LaunchTime(work[k]) < t) {
        if (stack.empty()) {
          k = std::partition_point(work.begin() + k, work.end(),
                                   [&](uint32_t w) { return index.LaunchTime(w) < t; }) -
              work.begin();
          break;
        }
        pop_closed(index.LaunchTime(work[k]));
        if (!stack.empty()) {
          index.Accumulate(work[k], out.work[stack.back()]);
          ++(index.IsKernel(work[k]) ? out.kernels_inside : out.memops_inside);
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
        for (uint32_t w : index.LaunchedIn(thread, r.start_ns[row], r.end_ns[row])) {
          index.Accumulate(w, out.work[i]);
        }
        continue;
      }
      if (!stack.empty()) {
        out.parent[i] = static_cast<int32_t>(stack.back());
        out.depth[i] = out.depth[stack.back()] + 1;
      }
      stack.push_back(i);
    }
    consume_until(INT64_MAX);
    pop_closed(INT64_MAX);
    g0 = g1;
  }
  return out;
}

}  // namespace sightline
