#include "analyses/serving/queueing.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "base/stats.h"
#include "base/time_units.h"

namespace sightline {

QueueingTail ComputeQueueingTail(const RequestResults& results, const ServingMetrics& m) {
  QueueingTail t;
  std::vector<double> queue;
  for (const RequestRecord& q : results.requests) {
    if (!q.success) continue;
    if (q.queue_s < 0) return t;  // unknown for some: no claim
    queue.push_back(q.queue_s * 1e9);
  }
  if (queue.size() < 2) return t;
  t.known = true;
  t.median_queue_ns = Median(queue);
  for (const RequestRecord& q : results.requests) {
    if (!q.success || q.ttft_s * 1e9 < m.ttft.p90_ns) continue;
    ++t.tail_requests;
    t.tail_ttft_ns += q.ttft_s * 1e9;
    t.tail_queue_ns += q.queue_s * 1e9;
    t.excess_ns += std::max(0.0, q.queue_s * 1e9 - t.median_queue_ns);
    t.tail_preempted += q.preemptions > 0;
  }
  return t;
}

}  // namespace sightline
