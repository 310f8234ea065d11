#include "analyses/serving/queueing.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "analyses/findings/findings.h"
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

void AddQueueingFinding(const QueueingTail& t, Report& report) {
  if (!t.known || t.tail_requests == 0 || t.tail_ttft_ns <= 0) return;
  const double share = t.tail_queue_ns / t.tail_ttft_ns;
  if (share < 0.5 || t.excess_ns <= 0) return;
  Finding f;
  f.id = "ttft_queueing";
  f.severity = share >= 0.75 ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "The TTFT tail is queueing: the {} requests at or above the TTFT p90 spent {:.0f}% of their "
      "TTFT waiting to be scheduled (median wait of all requests {})",
      t.tail_requests, 100 * share, FormatDuration(static_cast<DurationNs>(t.median_queue_ns)));
  f.evidence.push_back(
      {"tail_requests", "Requests at or above the TTFT p90", t.tail_requests, Unit::kCount});
  f.evidence.push_back(
      {"tail_queue_ns", "Their time waiting to be scheduled", t.tail_queue_ns, Unit::kDurationNs});
  f.evidence.push_back({"tail_ttft_ns", "Their TTFT", t.tail_ttft_ns, Unit::kDurationNs});
  f.evidence.push_back(
      {"queue_share_pct", "Waiting share of their TTFT", 100 * share, Unit::kPercent});
  f.evidence.push_back(
      {"tail_preempted", "Of them preempted at least once", t.tail_preempted, Unit::kCount});
  f.where = "requests between arrival and their first scheduling (request log)";
  f.recommendation =
      t.tail_preempted > 0
          ? "Requests wait for a slot and some were preempted (KV-cache blocks ran out): give the "
            "KV cache more memory (vLLM --gpu-memory-utilization, TensorRT-LLM "
            "free_gpu_memory_fraction), lower the batch limit so admitted requests are not "
            "evicted, "
            "or add capacity / admission control in front of the server."
          : "Requests wait for a slot, not for compute: raise the batch limit (vLLM "
            "--max-num-seqs, "
            "TensorRT-LLM max_batch_size) if KV-cache memory allows, chunk long prefills so queued "
            "requests get their first iteration sooner, or add replicas / admission control in "
            "front of the server.";
  // Request time: what the tail requests waited beyond a typical wait.
  f.estimated_savings_ns = static_cast<int64_t>(t.excess_ns);
  report.findings.push_back(std::move(f));
  SortFindings(report.findings);
}

}  // namespace sightline
