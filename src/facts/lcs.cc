#include "facts/lcs.h"

#include <algorithm>

namespace sightline {

std::vector<int32_t> LongestCommonSubsequence(const std::vector<uint32_t>& s, const uint32_t* e,
                                              size_t w) {
  const size_t m = s.size();
  std::vector<uint16_t> dp((m + 1) * (w + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint16_t& { return dp[i * (w + 1) + j]; };
  for (size_t i = 1; i <= m; ++i) {
    for (size_t j = 1; j <= w; ++j) {
      at(i, j) = s[i - 1] == e[j - 1] ? static_cast<uint16_t>(at(i - 1, j - 1) + 1)
                                      : std::max(at(i - 1, j), at(i, j - 1));
    }
  }
  std::vector<int32_t> map(m, -1);
  size_t i = m, j = w;
  while (i > 0 && j > 0) {
    if (s[i - 1] == e[j - 1] && at(i, j) == at(i - 1, j - 1) + 1) {
      map[--i] = static_cast<int32_t>(--j);
    } else if (at(i - 1, j) >= at(i, j - 1)) {
      --i;
    } else {
      --j;
    }
  }
  return map;
}

}  // namespace sightline
