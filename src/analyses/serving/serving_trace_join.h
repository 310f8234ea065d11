// Joins the token gaps of a request log (serving/request_results.h) to a trace's iterations by the
// iteration counter (the request log stamps each emitted chunk with the open iteration; the trace's
// iteration ranges carry the counter in their names), places the log's clock on the trace's from
// that, and measures what the trace shows inside each gap: garbage collection of the serving
// process. Gaps at the ITL tail that held GC make the finding "gc_in_token_gaps" (its rule reads
// this join). Units: ns on the trace's clock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyses/common/analysis_context.h"
#include "analyses/serving/serving_metrics.h"
#include "importers/serving_results/request_results.h"
#include "report/report.h"

namespace sightline {

struct ServingTraceJoin {
  bool joined = false;
  std::string note;     // why nothing or only part joined
  int64_t gaps = 0;     // ITL gaps with known chunk iterations
  int64_t matched = 0;  // of those, both ends found among the trace's iterations
  // True when the request log's clock could be placed on the trace's: every chunk's time falls
  // inside its iteration for one offset (known within +/- offset_uncertainty_ns). Then a gap is
  // measured between its two chunks; else over the two emitting iterations, whole.
  bool clock_joined = false;
  double offset_uncertainty_ns = 0;
  double typical_ns = 0;  // the median of the matched gaps
  // Gaps during which GC ran for at least half a typical gap ("with GC"), and the others.
  LatencyStats with_gc, without_gc;
  int64_t tail_gaps = 0, tail_gaps_with_gc = 0;  // gaps at or above the ITL p99 (all gaps)
  double gc_in_tail_ns = 0;                      // GC time inside the tail gaps
  // Tail gaps without GC during which the process's GPUs sat idle for over half the gap: the host
  // held the tokens back (clock join only; with the counter alone the windows are whole
  // iterations).
  int64_t tail_gaps_host_stall = 0;
  // Σ over gaps with GC of min(GC time inside, gap − typical): what GC added to the token gaps.
  double excess_ns = 0;
  // TTFT (clock join only): requests at or above the TTFT p90, how many had GC for at least a
  // tenth of their TTFT between arrival and first chunk, and the GC time inside their TTFT.
  int64_t ttft_tail_requests = 0, ttft_tail_with_gc = 0;
  double ttft_gc_in_tail_ns = 0;
};

// `metrics`: of the same results (the ITL p99 and TTFT p90 define the tails). Needs chunk
// iterations (request log) and a main iteration set in `context`; otherwise `joined` is false and
// `note` says why.
ServingTraceJoin JoinTokenGapsToTrace(AnalysisContext& context, const RequestResults& results,
                                      const ServingMetrics& metrics);

// Table "itl_by_gc" and facts in the serving section; nothing when not joined but the note.
void AddServingTraceJoin(const ServingTraceJoin& join, Section& section);

// The join as a blob (base/byte_codec.h, every figure bit for bit), so that it is made where the
// first trace is loaded (a rank thread or MPI process: pipeline/rank_parts.h) and read on process
// 0. Decoding a blob that is not one is an error.
std::string EncodeServingTraceJoin(const ServingTraceJoin& join);
StatusOr<ServingTraceJoin> DecodeServingTraceJoin(std::string_view blob);

}  // namespace sightline
