// The ranks analysis's options (ranks.h). Its own header, in the common room (src/CMakeLists.txt),
// so that AnalyzeOptions can hold it.
#pragma once

#include <cstdint>

namespace sightline {

struct RanksOptions {
  // > 0: ranks are placed on hosts in blocks of this many (rank r on host r / N), which overrides
  // what the traces or file names say (--ranks-per-host).
  int32_t ranks_per_host = 0;
};

}  // namespace sightline
