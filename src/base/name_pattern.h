// Names of one loop or one family of ranges differ only in their numbers ("ProfilerStep#12",
// "decode_step_7"): the pattern replaces each run of digits with "N". The iterations analysis
// groups ranges by it and the diff matches range names by it.
#pragma once

#include <string>
#include <string_view>

namespace sightline {

// "ProfilerStep#12" -> "ProfilerStep#N"; "layer3.mlp7" -> "layerN.mlpN".
std::string DigitRunsToN(std::string_view name);

}  // namespace sightline
