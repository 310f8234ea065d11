// The idle-gaps analysis's options (idle_gaps.h): what counts as a gap. Its own header, in the
// common room (src/CMakeLists.txt), so that AnalyzeOptions can hold it; it includes nothing of
// the analysis.
#pragma once

#include <cstddef>

#include "base/time_units.h"

namespace sightline {

struct IdleGapsOptions {
  DurationNs min_gap_ns = 2'000;  // shorter gaps are launch jitter, not waste (--min-gap-us)
  size_t keep_largest = 1'000;    // gaps kept in IdleGapsResult::gaps (all gaps count in totals)
};

}  // namespace sightline
