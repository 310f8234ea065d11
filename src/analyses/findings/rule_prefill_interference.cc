// Rule prefill_interference: a token gap that spans another request's prefill is much longer than
// a decode-only gap, and such gaps make the ITL tail (serving results with the iterations each
// token came out in: a request log). docs/analyses/findings.md, "prefill_interference".
#include <fmt/format.h>

#include <algorithm>

#include "analyses/findings/findings.h"
#include "analyses/serving/serving_metrics.h"
#include "base/time_units.h"

namespace sightline {

Status RulePrefillInterference(const ServingMetrics& m, std::vector<Finding>& out) {
  const PrefillInterference& pi = m.prefill;
  if (!pi.known || pi.with_prefill.n == 0 || pi.without.n == 0 || pi.typical_ns <= 0)
    return Status::Ok();
  // A prefill at least half a decode step longer (median), and visible in the upper decile.
  if (pi.prefill_cost_ns < 0.5 * pi.typical_ns ||
      pi.with_prefill.p90_ns < 1.5 * pi.without.p90_ns) {
    return Status::Ok();
  }
  Finding f;
  f.id = "prefill_interference";
  const double ratio = pi.with_prefill.p90_ns / std::max(1.0, pi.without.p90_ns);
  f.severity = ratio >= 3 ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "Prefills stall decoding: a token gap across a prefill iteration is {} longer (median) than "
      "a decode-only gap of {}; ITL p90 {} against {}",
      FormatDuration(static_cast<DurationNs>(pi.prefill_cost_ns)),
      FormatDuration(static_cast<DurationNs>(pi.typical_ns)),
      FormatDuration(static_cast<DurationNs>(pi.with_prefill.p90_ns)),
      FormatDuration(static_cast<DurationNs>(pi.without.p90_ns)));
  f.evidence.push_back(
      {"gaps_with_prefill", "ITL gaps spanning a prefill", pi.with_prefill.n, Unit::kCount});
  f.evidence.push_back(
      {"prefill_cost_ns", "Added per gap (median)", pi.prefill_cost_ns, Unit::kDurationNs});
  f.evidence.push_back(
      {"p90_with_prefill_ns", "P90 of those gaps", pi.with_prefill.p90_ns, Unit::kDurationNs});
  f.evidence.push_back(
      {"p90_decode_only_ns", "P90 of the other gaps", pi.without.p90_ns, Unit::kDurationNs});
  f.evidence.push_back({"tail_gaps_with_prefill", "Gaps at or above the ITL p99 spanning a prefill",
                        fmt::format("{} of {}", pi.tail_gaps_with_prefill, pi.tail_gaps)});
  f.where = "streamed tokens of requests decoding while another request's prefill ran";
  f.recommendation =
      "Keep prefills from stalling decodes: chunked prefill with a smaller chunk / max batched "
      "tokens per iteration (vLLM --max-num-batched-tokens, TensorRT-LLM enable_chunked_context), "
      "decode-first scheduling, or disaggregated prefill and decode servers.";
  // What the prefills added to the streaming requests' gaps, each gap credited at most the median
  // prefill cost (longer stalls in the same gaps have other causes): an estimate of what
  // decode-only iterations would give back, in request time, not loop time.
  f.estimated_savings_ns = static_cast<int64_t>(pi.excess_ns);
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
