// What makes the TTFT tail when the source knows queue time (the request log: received -> first
// scheduled) and preemptions: the requests at or above the TTFT p90, how much of their TTFT they
// spent waiting to be scheduled; the rule ttft_queueing reads it (a finding when waiting
// dominates).
#pragma once

#include <cstdint>

#include "analyses/serving/serving_metrics.h"
#include "importers/serving_results/request_results.h"
#include "report/report.h"

namespace sightline {

struct QueueingTail {
  bool known = false;          // queue time known for every completed request
  int64_t tail_requests = 0;   // completed requests with TTFT >= the TTFT p90
  double tail_ttft_ns = 0;     // Σ of their TTFT
  double tail_queue_ns = 0;    // Σ of their queue time
  double median_queue_ns = 0;  // over all completed requests
  double excess_ns = 0;        // Σ over the tail requests of max(0, queue − median queue)
  int64_t tail_preempted = 0;  // tail requests preempted at least once
};

QueueingTail ComputeQueueingTail(const RequestResults& results, const ServingMetrics& metrics);

}  // namespace sightline
