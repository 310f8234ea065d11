#include "facts/intervals.h"

#include <algorithm>

namespace sightline {

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  const auto by_start = [](const Interval& x, const Interval& y) {
    return x.start_ns < y.start_ns;
  };
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_start)) {
    std::sort(intervals.begin(), intervals.end(), by_start);
  }
  // Merge in place: `out` is the index of the last merged interval.
  size_t out = 0;
  bool any = false;
  for (const Interval& iv : intervals) {
    if (iv.end_ns <= iv.start_ns) continue;
    if (any && iv.start_ns <= intervals[out].end_ns) {
      intervals[out].end_ns = std::max(intervals[out].end_ns, iv.end_ns);
      continue;
    }
    if (any) ++out;
    intervals[out] = iv;
    any = true;
  }
  intervals.resize(any ? out + 1 : 0);
  return intervals;
}

DurationNs TotalLength(const std::vector<Interval>& merged) {
  DurationNs total = 0;
  for (const Interval& iv : merged) total += iv.end_ns - iv.start_ns;
  return total;
}

DurationNs BusyWithin(const std::vector<Interval>& merged, TimeNs a, TimeNs b) {
  if (b <= a) return 0;
  // First interval that ends after a.
  auto it = std::upper_bound(merged.begin(), merged.end(), a,
                             [](TimeNs t, const Interval& iv) { return t < iv.end_ns; });
  DurationNs busy = 0;
  for (; it != merged.end() && it->start_ns < b; ++it) {
    busy += std::min(it->end_ns, b) - std::max(it->start_ns, a);
  }
  return busy;
}

std::vector<Interval> GapsWithin(const std::vector<Interval>& merged, TimeNs a, TimeNs b) {
  std::vector<Interval> gaps;
  if (b <= a) return gaps;
  auto it = std::upper_bound(merged.begin(), merged.end(), a,
                             [](TimeNs t, const Interval& iv) { return t < iv.end_ns; });
  TimeNs cursor = a;
  for (; it != merged.end() && it->start_ns < b; ++it) {
    if (it->start_ns > cursor) gaps.push_back({cursor, it->start_ns});
    cursor = std::max(cursor, it->end_ns);
  }
  if (cursor < b) gaps.push_back({cursor, b});
  return gaps;
}

namespace {

// The first interval of disjoint sorted `v` that ends after `t` (binary search): where a walk over
// `v` against intervals starting at `t` begins, so that a short list against a long one costs
// O(short + overlap + log long), not O(long).
size_t FirstEndingAfter(const std::vector<Interval>& v, TimeNs t) {
  return static_cast<size_t>(
      std::upper_bound(v.begin(), v.end(), t,
                       [](TimeNs x, const Interval& iv) { return x < iv.end_ns; }) -
      v.begin());
}

}  // namespace

DurationNs IntersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  if (a.empty() || b.empty()) return 0;
  DurationNs total = 0;
  size_t i = FirstEndingAfter(a, b.front().start_ns), j = FirstEndingAfter(b, a.front().start_ns);
  while (i < a.size() && j < b.size()) {
    if (a[i].start_ns >= b.back().end_ns || b[j].start_ns >= a.back().end_ns) break;
    const TimeNs s = std::max(a[i].start_ns, b[j].start_ns);
    const TimeNs e = std::min(a[i].end_ns, b[j].end_ns);
    if (e > s) total += e - s;
    if (a[i].end_ns < b[j].end_ns) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

DurationNs IdleAfter(const std::vector<Interval>& merged, TimeNs t) {
  auto it = std::upper_bound(merged.begin(), merged.end(), t,
                             [](TimeNs v, const Interval& i) { return v < i.start_ns; });
  if (it == merged.end()) return 0;  // no later work: the loop ended, nothing to recover
  if (it != merged.begin() && std::prev(it)->end_ns > t) return 0;  // busy at t
  return it->start_ns - t;
}

std::vector<Interval> SubtractIntervals(const std::vector<Interval>& a,
                                        const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = a.empty() ? 0 : FirstEndingAfter(b, a.front().start_ns);
  for (const Interval& iv : a) {
    TimeNs start = iv.start_ns;
    while (j < b.size() && b[j].end_ns <= start) ++j;
    for (size_t k = j; k < b.size() && b[k].start_ns < iv.end_ns; ++k) {
      if (b[k].start_ns > start) out.push_back({start, b[k].start_ns});
      start = std::max(start, b[k].end_ns);
      if (start >= iv.end_ns) break;
    }
    if (start < iv.end_ns) out.push_back({start, iv.end_ns});
  }
  return out;
}

}  // namespace sightline
