#include "analyses/common/range_at.h"

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
  int32_t plain[2] = {kNoRow, kNoRow};  // the two innermost ranges that are not ops
  for (int32_t row = *(pos - 1); row != kNoRow; row = r.parent[row]) {
    if (r.end_ns[row] <= t || r.kind[row] == RangeKind::kPythonFunction) continue;
    const bool op = r.kind[row] == RangeKind::kCpuOp || IsAutogradOpRange(trace_.str(r.name[row]));
    if (op) {
      if (hit.op == kNoRow) hit.op = row;
    } else if (plain[0] == kNoRow) {
      plain[0] = row;
    } else if (plain[1] == kNoRow) {
      plain[1] = row;
    }
  }
  if (hit.op != kNoRow) {
    hit.range = plain[0];
  } else {  // no op: the innermost range stands for it (plain NVTX)
    hit.op = plain[0];
    hit.range = plain[1];
  }
  return hit;
}

std::string_view AutogradOpName(std::string_view name) {
  for (std::string_view suffix : {", seq = ", ", op_id = "}) {
    const size_t at = name.find(suffix);
    if (at != std::string_view::npos) name = name.substr(0, at);
  }
  return name;
}

bool IsAutogradOpRange(std::string_view name) {
  return name.find(", op_id = ") != std::string_view::npos;
}

}  // namespace sightline
