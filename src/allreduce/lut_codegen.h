// Writes a tuned all-reduce lookup table as a self-contained C++ header (standard C++17, no
// includes) declaring sightline::allreduce::SelectStrategy. docs/allreduce.md#tune.
#pragma once

#include <string>
#include <vector>

#include "allreduce/lut_tune.h"

namespace sightline {

// `sources` are named in the header's opening comment (the sweep files it came from).
std::string GenerateLutHeader(const TuneResult& result, const std::vector<std::string>& sources);

}  // namespace sightline
