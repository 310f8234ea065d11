// Time and size units shared by every stage: int64 nanoseconds from the importer onward.
#pragma once

#include <cstdint>
#include <string>

namespace sightline {

using TimeNs = int64_t;  // a point in time, ns (the importer's clock; usually epoch or boot based)
using DurationNs = int64_t;  // a length of time, ns

inline constexpr DurationNs kNsPerUs = 1'000;
inline constexpr DurationNs kNsPerMs = 1'000'000;
inline constexpr DurationNs kNsPerS = 1'000'000'000;

// "1.23 ms", "850 ns", "12.4 s": a duration with a unit chosen for reading.
std::string FormatDuration(DurationNs ns);
// "1.5 MiB", "512 B".
std::string FormatBytes(int64_t bytes);

}  // namespace sightline
