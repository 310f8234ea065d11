// Where a thread's samples were: the innermost frames of its Python or native (CPU) samples, by
// count (threads.h, HotFrames).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyses/threads/threads.h"

namespace sightline {

std::string HotFrames(const Trace& trace, const StackSampleTable& p, int32_t pid, int32_t tid,
                      const std::vector<Interval>& within, size_t n) {
  std::map<StringId, int64_t> counts;
  int64_t total = 0;
  for (const Interval& iv : within) {
    auto first =
        std::lower_bound(p.time_ns.begin(), p.time_ns.end(), iv.start_ns) - p.time_ns.begin();
    for (size_t i = static_cast<size_t>(first); i < p.size() && p.time_ns[i] < iv.end_ns; ++i) {
      if (p.pid[i] != pid || p.tid[i] != tid || p.frame_count[i] == 0) continue;
      ++counts[p.frames[static_cast<size_t>(p.first_frame[i])]];
      ++total;
    }
  }
  std::vector<std::pair<int64_t, StringId>> top;
  for (const auto& [frame, c] : counts) top.push_back({c, frame});
  std::stable_sort(top.begin(), top.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (size_t i = 0; i < std::min(n, top.size()); ++i) {
    out += fmt::format("{}{} {:.0f}%", i ? ", " : "", trace.str(top[i].second),
                       100.0 * static_cast<double>(top[i].first) / static_cast<double>(total));
  }
  return out;
}

std::string HotFrames(const Trace& trace, int32_t pid, int32_t tid,
                      const std::vector<Interval>& within, size_t n) {
  return HotFrames(trace, trace.py_samples, pid, tid, within, n);
}

std::string HotFrames(const Trace& trace, int32_t pid, int32_t tid, TimeNs a, TimeNs b, size_t n) {
  return HotFrames(trace, trace.py_samples, pid, tid, std::vector<Interval>{{a, b}}, n);
}

}  // namespace sightline
