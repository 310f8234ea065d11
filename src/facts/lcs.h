// The longest common subsequence of two sequences of ids, as a map from the first to the second:
// used to align a CUDA graph's kernels or captured launches with an eager run of the same step
// when a few are added or missing on either side (graph_alignment.h, whole_graph_estimate.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sightline {

// map[i] = the index into e[0, w) matched with s[i], or -1. O(|s| x w) time and 2-byte cells:
// callers bound both (|s|, w < 65,536).
std::vector<int32_t> LongestCommonSubsequence(const std::vector<uint32_t>& s, const uint32_t* e,
                                              size_t w);

}  // namespace sightline
