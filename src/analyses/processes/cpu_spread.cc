#include "analyses/processes/cpu_spread.h"

#include <algorithm>

namespace sightline {

CpuWithin CpuOfProcessWithin(const RunProcess& p, TimeNs from, TimeNs to,
                             const std::vector<Interval>& busy) {
  CpuWithin out;
  if (to <= from) return out;
  TimeNs begin = p.start_ns;  // sample i covers [previous sample's end, cpu_end_ns[i])
  for (size_t i = 0; i < p.cpu_end_ns.size(); ++i) {
    const TimeNs end = p.cpu_end_ns[i];
    const TimeNs a = std::max(begin, from), b = std::min(end, to);
    if (end > begin && b > a && p.cpu_used_ns[i] > 0) {
      const double per_ns =
          static_cast<double>(p.cpu_used_ns[i]) / static_cast<double>(end - begin);
      const DurationNs idle = (b - a) - BusyWithin(busy, a, b);
      out.cpu_ns += static_cast<DurationNs>(per_ns * static_cast<double>(b - a));
      out.while_idle_ns += static_cast<DurationNs>(per_ns * static_cast<double>(idle));
    }
    begin = std::max(begin, end);
    if (begin >= to) break;
  }
  return out;
}

}  // namespace sightline
