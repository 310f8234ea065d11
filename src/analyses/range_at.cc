#include "analyses/range_at.h"

#include <algorithm>

namespace sightline {

RangeAt::RangeAt(const Trace& trace) : trace_(trace) {
  const RangeTable& r = trace.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] == RangeKind::kPythonFunction) continue;
    rows_[{r.pid[i], r.tid[i]}].push_back(static_cast<int32_t>(i));  // the table is by start
  }
}

RangeAt::Hit RangeAt::At(int32_t pid, int32_t tid, TimeNs t) const {
  Hit hit;
  auto it = rows_.find({pid, tid});
  if (it == rows_.end()) return hit;
  const RangeTable& r = trace_.ranges;
  const std::vector<int32_t>& rows = it->second;
  // The last range that started at or before t: the innermost range containing t is it or one of
  // its ancestors (ranges on one thread nest).
  auto pos = std::upper_bound(rows.begin(), rows.end(), t,
                              [&](TimeNs x, int32_t row) { return x < r.start_ns[row]; });
  if (pos == rows.begin()) return hit;
  int32_t fallback_op = kNoRow;
  for (int32_t row = *(pos - 1); row != kNoRow; row = r.parent[row]) {
    if (r.end_ns[row] <= t || r.kind[row] == RangeKind::kPythonFunction) continue;
    if (r.kind[row] == RangeKind::kCpuOp) {
      if (hit.op == kNoRow) hit.op = row;
      continue;
    }
    if (fallback_op == kNoRow) {
      fallback_op = row;
      continue;
    }
    if (hit.range == kNoRow) hit.range = row;
  }
  if (hit.op == kNoRow) {
    hit.op = fallback_op;  // no cpu_op: the innermost range is the op (nsys autograd-nvtx)
  } else {
    hit.range = fallback_op;  // a cpu_op: the innermost annotation around it
  }
  return hit;
}

}  // namespace sightline
