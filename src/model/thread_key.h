// One 64-bit key for a (process, thread) pair: the process in the high half, the thread's 32 bits
// in the low half.
#pragma once

#include <cstdint>

namespace sightline {

inline int64_t ThreadKey(int32_t pid, int32_t tid) {
  return (static_cast<int64_t>(pid) << 32) | static_cast<uint32_t>(tid);
}

}  // namespace sightline
