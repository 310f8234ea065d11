// What range a host thread was inside at an instant: the innermost op (PyTorch cpu_op, or an NVTX
// range such as nsys's autograd-nvtx op ranges) and the innermost NVTX range or PyTorch
// annotation around it. Used to say which op and which range allocated memory. Built once for the
// threads asked about; each lookup is a binary search plus a walk up the nesting.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace sightline {

class RangeAt {
 public:
  explicit RangeAt(const Trace& trace);

  struct Hit {
    int32_t op = kNoRow;     // innermost cpu_op; else the innermost non-Python range
    int32_t range = kNoRow;  // innermost NVTX range or annotation other than `op`
  };
  // The ranges of thread (pid, tid) that contain time t (start <= t < end).
  Hit At(int32_t pid, int32_t tid, TimeNs t) const;

 private:
  const Trace& trace_;
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> rows_;  // by start, per thread
};

}  // namespace sightline
