// Interval unions: the one definition of "busy time" (docs/metrics.md, "GPU busy") that the
// overview, idle-gap and iteration analyses share. Intervals are half-open [start_ns, end_ns).
#pragma once

#include <vector>

#include "base/time_units.h"

namespace sightline {

struct Interval {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  DurationNs dur_ns() const { return end_ns - start_ns; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Accumulates the union of intervals that arrive in non-decreasing start order, in O(1) memory.
// Empty intervals (end == start) add nothing. Use it for running totals over sorted tables.
class UnionAccumulator {
 public:
  void Add(TimeNs start_ns, TimeNs end_ns) {
    if (end_ns <= start_ns) return;
    if (!open_ || start_ns > cur_end_) {
      if (open_) total_ += cur_end_ - cur_start_;
      cur_start_ = start_ns;
      cur_end_ = end_ns;
      open_ = true;
    } else if (end_ns > cur_end_) {
      cur_end_ = end_ns;
    }
  }
  // Length of the union of everything added so far.
  DurationNs total() const { return total_ + (open_ ? cur_end_ - cur_start_ : 0); }

 private:
  TimeNs cur_start_ = 0, cur_end_ = 0;
  DurationNs total_ = 0;
  bool open_ = false;
};

// Sorts (when needed) and merges overlapping or touching intervals into disjoint intervals in
// increasing order. Empty intervals are dropped.
std::vector<Interval> MergeIntervals(std::vector<Interval> intervals);

// Total length of disjoint intervals (the output of MergeIntervals / AppendToUnion).
DurationNs TotalLength(const std::vector<Interval>& merged);

// Appends [start_ns, end_ns) to a union built from intervals that arrive in non-decreasing start
// order (the trace tables' order): merges it into the last interval when they overlap or touch.
// Empty intervals add nothing. The per-device busy unions (GpuTimeFacts::Busy) are built so.
inline void AppendToUnion(std::vector<Interval>& merged, TimeNs start_ns, TimeNs end_ns) {
  if (end_ns <= start_ns) return;
  if (!merged.empty() && start_ns <= merged.back().end_ns) {
    if (end_ns > merged.back().end_ns) merged.back().end_ns = end_ns;
  } else {
    merged.push_back({start_ns, end_ns});
  }
}

// How much of [a, b) the disjoint sorted intervals `merged` cover. O(log n + intervals in range).
DurationNs BusyWithin(const std::vector<Interval>& merged, TimeNs a, TimeNs b);

// The gaps of `merged` inside [a, b): the complement of the union, clipped to [a, b).
std::vector<Interval> GapsWithin(const std::vector<Interval>& merged, TimeNs a, TimeNs b);

// Length of the intersection of two disjoint sorted interval lists. O(a + b).
DurationNs IntersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b);

// The parts of disjoint sorted `a` not covered by disjoint sorted `b` (a minus b). O(a + b).
std::vector<Interval> SubtractIntervals(const std::vector<Interval>& a,
                                        const std::vector<Interval>& b);

// Time the union `merged` stays idle after `t`: until its next interval starts (0 when `t` is
// inside an interval or nothing follows).
DurationNs IdleAfter(const std::vector<Interval>& merged, TimeNs t);

}  // namespace sightline
