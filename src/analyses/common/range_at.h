// What range a host thread was inside at an instant: the innermost op (PyTorch cpu_op, or an NVTX
// range such as nsys's autograd-nvtx op ranges) and the innermost NVTX range or PyTorch
// annotation around it. Used to say which op and which range allocated memory. Built once for the
// threads asked about; each lookup is a binary search plus a walk up the nesting.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace sightline {

// nsys --pytorch=autograd-nvtx names each op's NVTX range "aten::mm, seq = 0, op_id = 5": the op's
// name without the ", seq = ..." / ", op_id = ..." suffix; other names unchanged.
std::string_view AutogradOpName(std::string_view name);
// Whether an NVTX range name is such an op range.
bool IsAutogradOpRange(std::string_view name);

class RangeAt {
 public:
  explicit RangeAt(const Trace& trace);

  struct Hit {
    // The innermost op: a cpu_op or an autograd-nvtx op range; without one, the innermost range.
    int32_t op = kNoRow;
    // The innermost NVTX range or annotation that is not an op (other than `op`).
    int32_t range = kNoRow;
  };
  // The ranges of thread (pid, tid) that contain time t (start <= t < end).
  Hit At(int32_t pid, int32_t tid, TimeNs t) const;

 private:
  const Trace& trace_;
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> rows_;  // by start, per thread
};

}  // namespace sightline
