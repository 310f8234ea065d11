// Rule gc_in_token_gaps: Python garbage collections of the serving process make the ITL tail (a
// request log's token gaps joined to the process's trace). docs/analyses/findings.md,
// "gc_in_token_gaps".
#include <fmt/format.h>

#include "analyses/findings/findings.h"
#include "analyses/serving/serving_trace_join.h"
#include "base/time_units.h"

namespace sightline {

Status RuleGcInTokenGaps(const ServingTraceJoin& j, std::vector<Finding>& out) {
  if (!j.joined || j.with_gc.n == 0 || j.tail_gaps == 0) return Status::Ok();
  // GC must make the tail: a quarter of the tail gaps at least, and a visible excess.
  if (4 * j.tail_gaps_with_gc < j.tail_gaps || j.excess_ns <= 0) return Status::Ok();
  Finding f;
  f.id = "gc_in_token_gaps";
  const double share = static_cast<double>(j.tail_gaps_with_gc) / static_cast<double>(j.tail_gaps);
  f.severity = share >= 0.5 ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "Garbage collection makes the ITL tail: {} of the {} token gaps at or above the ITL p99 "
      "ran a GC pause; gaps with GC p50 {} against {} without",
      j.tail_gaps_with_gc, j.tail_gaps, FormatDuration(static_cast<DurationNs>(j.with_gc.p50_ns)),
      FormatDuration(static_cast<DurationNs>(j.without_gc.p50_ns)));
  f.evidence.push_back({"tail_gaps_with_gc", "Tail gaps (>= ITL p99) with GC",
                        fmt::format("{} of {}", j.tail_gaps_with_gc, j.tail_gaps)});
  f.evidence.push_back(
      {"gc_in_tail_ns", "GC time inside the tail gaps", j.gc_in_tail_ns, Unit::kDurationNs});
  f.evidence.push_back(
      {"p99_with_gc_ns", "P99 of gaps with GC", j.with_gc.p99_ns, Unit::kDurationNs});
  f.evidence.push_back(
      {"p99_without_gc_ns", "P99 of gaps without GC", j.without_gc.p99_ns, Unit::kDurationNs});
  f.where = j.clock_joined
                ? "token gaps of streaming requests, placed on the trace's clock through "
                  "the iteration each chunk came out in"
                : "token gaps of streaming requests, joined to the trace's iterations "
                  "by counter";
  f.recommendation =
      "Keep Python's garbage collector out of the decode loop: gc.freeze() after warm-up (moves "
      "the model's and server's long-lived objects out of collection), raise the generation-0 "
      "threshold (gc.set_threshold), or disable automatic GC while serving and collect when idle; "
      "and allocate fewer short-lived Python objects per token.";
  f.estimated_savings_ns = static_cast<int64_t>(j.excess_ns);
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
