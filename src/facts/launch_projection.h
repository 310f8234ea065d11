// Projection of host ranges onto the GPU work they launched (docs/metrics.md, "NVTX → GPU
// projection"), shared by the nvtx_projection and iterations analyses. A kernel or memory operation
// belongs to a range when its launching API call (launch_call) is on the range's thread (pid, tid)
// and starts in [range.start, range.end). GPU work without a launch_call cannot be projected.
// With LaunchPoints::kLaunchAndCapture, a kernel replayed from a CUDA graph has a second point
// where the trace says what it is: its capture, when its node's capture is known
// (KernelTable::capture_*: the ranges open on the capturing thread then, the layer that captured
// it), else, given a GraphAlignment, the launch of its eager counterpart (graph_alignment.h: the
// ranges around that launch, less those holding the whole matched eager run, which is the step,
// not the kernel's place). A range around both points counts the kernel once.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/time_units.h"
#include "facts/graph_alignment.h"
#include "model/trace.h"

namespace sightline {

// What a range launched: counts, summed durations and the span of the work on the GPU.
struct LaunchedWork {
  int64_t kernel_count = 0;
  int64_t memop_count = 0;
  DurationNs kernel_time_ns = 0;      // sum of kernel durations (overlaps counted twice)
  DurationNs memop_time_ns = 0;       // sum of memory-operation durations
  TimeNs first_start_ns = INT64_MAX;  // earliest GPU start of the work; INT64_MAX when none
  TimeNs last_end_ns = INT64_MIN;     // latest GPU end of the work; INT64_MIN when none

  bool empty() const { return kernel_count + memop_count == 0; }
  DurationNs gpu_time_ns() const { return kernel_time_ns + memop_time_ns; }
  // last end - first start; 0 when nothing was launched (or only work that adds no span).
  DurationNs span_ns() const {
    return last_end_ns >= first_start_ns ? last_end_ns - first_start_ns : 0;
  }
  void Add(const LaunchedWork& other);
};

enum class LaunchPoints {
  kLaunch,            // each work item at its launching call
  kLaunchAndCapture,  // and each replayed graph kernel at its capture (or aligned) point, too
};

// What a point of the index is.
enum class PointKind : uint8_t {
  kLaunch,   // the call that launched the work
  kCapture,  // a graph kernel's node capture
  kAligned,  // the launch of a graph kernel's eager counterpart (no capture point known)
};

// GPU work that has a launching API call, grouped by the call's thread and sorted by the call's
// start (with kLaunchAndCapture, graph kernels also by their capture's or eager counterpart's
// thread and time). Building it is O(work + API calls) (+ a sort of the second points); a lookup
// is a binary search.
class LaunchIndex {
 public:
  // `aligned` (kLaunchAndCapture only; may be null): the graph kernels' eager counterparts, for
  // the kernels without a capture point. It is read here, not kept.
  explicit LaunchIndex(const Trace& trace, LaunchPoints points = LaunchPoints::kLaunch,
                       const GraphAlignment* aligned = nullptr);

  // Work ids: [0, kernels) are kernel rows; kernels + r is memory-operation row r.
  bool IsKernel(uint32_t work) const { return work < num_kernels_; }
  uint32_t MemOpRow(uint32_t work) const { return work - num_kernels_; }

  // Dense id of the thread (pid, tid); -1 when it launched no GPU work.
  int32_t ThreadOf(int32_t pid, int32_t tid) const;
  // The work whose point on `thread` is in [a, b), in time order. With kLaunchAndCapture a kernel
  // whose launch and capture are both in [a, b) appears twice.
  std::span<const uint32_t> LaunchedIn(int32_t thread, TimeNs a, TimeNs b) const;
  // The entries of ThreadWork (and ThreadTimes, ThreadPointKinds) whose point is in [a, b), as
  // [first, last) positions.
  std::pair<size_t, size_t> EntriesIn(int32_t thread, TimeNs a, TimeNs b) const;
  // All work with a point on `thread`, in time order, and the time of each (ThreadTimes).
  std::span<const uint32_t> ThreadWork(int32_t thread) const;
  std::span<const TimeNs> ThreadTimes(int32_t thread) const;
  // Per entry of ThreadWork: what the point is (a launch, a capture, an aligned point).
  std::span<const PointKind> ThreadPointKinds(int32_t thread) const;
  // True for a kernel that has a second point, a capture or an aligned one (kLaunchAndCapture).
  bool HasSecondPoint(uint32_t work) const {
    return work < second_.size() && second_[work] != PointKind::kLaunch;
  }
  PointKind SecondPoint(uint32_t work) const {
    return work < second_.size() ? second_[work] : PointKind::kLaunch;
  }
  // For a kernel with an aligned point: whether [a, b) holds the whole eager run it was matched
  // in (then a range of that span is the step, not the kernel's place, and its aligned point does
  // not count there). False for any other work.
  bool HoldsEagerRun(uint32_t work, TimeNs a, TimeNs b) const;
  // Whether a range of [a, b) counts the point `kind` of `work` (all but an aligned point in a
  // range holding its whole eager run).
  bool PointCounts(uint32_t work, PointKind kind, TimeNs a, TimeNs b) const {
    return kind != PointKind::kAligned || !HoldsEagerRun(work, a, b);
  }
  int64_t captured_kernels() const { return captured_kernels_; }
  int64_t aligned_kernels() const { return aligned_kernels_; }
  // Start of the call that launched `work`.
  TimeNs LaunchTime(uint32_t work) const {
    return trace_.api_calls
        .start_ns[work < num_kernels_ ? trace_.kernels.launch_call[work]
                                      : trace_.memops.launch_call[work - num_kernels_]];
  }

  // Adds one work item to `out`; Remove takes its count and time back out (first start and last
  // end stay: counting an item twice does not move them). AccumulateCounts adds its count and
  // time only, ExtendSpan its first start and last end only: a graph kernel counted at its second
  // point adds no span, as its replays lie elsewhere on the timeline, spread over the loop.
  void Accumulate(uint32_t work, LaunchedWork& out) const;
  void AccumulateCounts(uint32_t work, LaunchedWork& out) const;
  void ExtendSpan(uint32_t work, LaunchedWork& out) const;
  void Remove(uint32_t work, LaunchedWork& out) const;

  int64_t unlinked_kernels() const { return unlinked_kernels_; }
  int64_t unlinked_memops() const { return unlinked_memops_; }

 private:
  const Trace& trace_;
  uint32_t num_kernels_ = 0;
  std::unordered_map<int64_t, int32_t> thread_ids_;  // (pid << 32 | tid) -> dense id
  std::vector<uint32_t> offsets_;                    // thread t owns [offsets_[t], offsets_[t+1])
  std::vector<uint32_t> work_;                       // work ids, by thread then time
  std::vector<TimeNs> times_;                        // the time of each entry of work_
  std::vector<PointKind> kinds_;                     // per entry of work_
  std::vector<PointKind> second_;                    // per kernel: its second point, if any
  std::vector<int32_t> eager_run_;  // per kernel with an aligned point: into eager_runs_
  std::vector<GraphAlignment::EagerRun> eager_runs_;
  int64_t unlinked_kernels_ = 0, unlinked_memops_ = 0, captured_kernels_ = 0, aligned_kernels_ = 0;

  void AddSecondPoints(const GraphAlignment* aligned);
};

// The projection of a set of ranges: per input row, the work launched inside it, its nesting
// parent and depth among the given rows (not among all ranges of the thread).
struct RangeProjection {
  // Inclusive: work of nested ranges counts for every ancestor. Graph kernels held at their
  // second point add to the counts and times, not to the span (first start, last end).
  std::vector<LaunchedWork> work;
  std::vector<int32_t> parent;  // index into the input rows; -1 for an outermost range
  std::vector<int32_t> depth;   // 0 = outermost among the given rows on its thread
  // Work launched inside at least one properly nested range (work that only a range overlapping
  // another without nesting holds is not counted here); a kernel with two points counts once.
  int64_t kernels_inside = 0, memops_inside = 0;
  // Of kernels_inside: replayed kernels that a range holds by their capture point, and those a
  // range holds by their aligned point (and not a range holding the whole eager run).
  int64_t kernels_by_capture = 0, kernels_by_alignment = 0;
};

// `rows` are rows of trace.ranges in table order (ascending). One sort-based sweep per thread:
// O(rows log rows + launched work) (an aligned point: + the open ranges above it, to find the
// innermost that holds its eager run). Ranges that overlap without nesting are summed by a direct
// scan of their launch slice.
RangeProjection ProjectRanges(const Trace& trace, const LaunchIndex& index,
                              std::span<const int32_t> rows);

}  // namespace sightline
