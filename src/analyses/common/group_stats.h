// Per-group duration (or size) statistics in O(n) for the summary analyses: rows are bucketed by
// group with one counting pass, then each group's values are summarized by selection
// (std::nth_element) instead of a full sort. Same definitions as ComputeDurationStats
// (docs/metrics.md, "Statistics"): median of an even count is the mean of the middle two, stddev
// is the sample standard deviation, p90/p99 interpolate linearly between closest ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/stats.h"

namespace sightline {

inline constexpr uint32_t kNoGroup = UINT32_MAX;

// Statistics of the values in [begin, end), which it reorders. O(n).
DurationStats StatsBySelection(int64_t* begin, int64_t* end);

// Statistics per group for rows [0, n): group(i) returns the row's group in [0, num_groups) or
// kNoGroup to skip it; value(i) returns its value. Two passes over the rows, one n-sized buffer.
template <typename GroupFn, typename ValueFn>
std::vector<DurationStats> ComputeGroupStats(size_t n, uint32_t num_groups, GroupFn group,
                                             ValueFn value) {
  std::vector<int64_t> offset(size_t{num_groups} + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t g = group(i);
    if (g != kNoGroup) ++offset[g + 1];
  }
  for (uint32_t g = 0; g < num_groups; ++g) offset[g + 1] += offset[g];
  std::vector<int64_t> values(static_cast<size_t>(offset.back()));
  std::vector<int64_t> cursor(offset.begin(), offset.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t g = group(i);
    if (g != kNoGroup) values[cursor[g]++] = value(i);
  }
  std::vector<DurationStats> out(num_groups);
  for (uint32_t g = 0; g < num_groups; ++g) {
    out[g] = StatsBySelection(values.data() + offset[g], values.data() + offset[g + 1]);
  }
  return out;
}

}  // namespace sightline
