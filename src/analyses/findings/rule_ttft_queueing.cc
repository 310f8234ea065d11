// Rule ttft_queueing: the requests at or above the TTFT p90 spent most of their TTFT waiting to be
// scheduled (serving results that know queue time: a request log). docs/analyses/findings.md,
// "ttft_queueing".
#include <fmt/format.h>

#include "analyses/findings/findings.h"
#include "analyses/serving/queueing.h"
#include "base/time_units.h"

namespace sightline {

Status RuleTtftQueueing(const QueueingTail& t, std::vector<Finding>& out) {
  if (!t.known || t.tail_requests == 0 || t.tail_ttft_ns <= 0) return Status::Ok();
  const double share = t.tail_queue_ns / t.tail_ttft_ns;
  if (share < 0.5 || t.excess_ns <= 0) return Status::Ok();
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
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
