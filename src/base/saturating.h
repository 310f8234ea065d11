// Sums that hold at the ends of int64 instead of overflowing (docs/reliability.md: "sums saturate
// or fail"). Durations from a damaged or hostile file can each be near 2^62 ns; their sum must not
// wrap into a negative time, nor a long double beyond int64 be converted (undefined).
#pragma once

#include <cstdint>
#include <limits>

namespace sightline {

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// A sum accumulated in long double, as int64, held at the ends.
inline int64_t SaturatingTotal(long double sum) {
  constexpr long double kMax = static_cast<long double>(std::numeric_limits<int64_t>::max());
  constexpr long double kMin = static_cast<long double>(std::numeric_limits<int64_t>::min());
  if (!(sum < kMax)) return std::numeric_limits<int64_t>::max();
  if (!(sum > kMin)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(sum);
}

}  // namespace sightline
