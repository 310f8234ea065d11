// Serving metrics: TTFT, TPOT, ITL, E2E latency, throughput, goodput and SLO attainment from the
// per-request results of a benchmark client (importers/serving_results/request_results.h),
// defined as the clients define them (vLLM's `vllm bench serve`; docs/metrics.md, "Serving"), and
// checked against the figures the client wrote itself. The "serving" multi-trace analysis adds
// them to `analyze --requests FILE [TRACE...]`. Units: ns, tokens, requests and tokens per second.
// docs/analyses/serving.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/serving/serving_options.h"
#include "base/status.h"
#include "importers/serving_results/request_results.h"
#include "report/report.h"

namespace sightline {

// Statistics as numpy computes them, which the clients use: mean, population standard deviation
// (np.std), percentiles with linear interpolation (np.percentile's default).
struct LatencyStats {
  int64_t n = 0;
  double mean_ns = 0, std_ns = 0, min_ns = 0, max_ns = 0;
  double p50_ns = 0, p90_ns = 0, p95_ns = 0, p99_ns = 0, p999_ns = 0;
};
LatencyStats ComputeLatencyStats(std::vector<double> values_ns);

// SloOptions is in serving_options.h (an analyze option). Parses "ttft=300,tpot=40" (also
// vLLM's "ttft:300 tpot:40" separators); an error names the bad part.
StatusOr<SloOptions> ParseSlo(std::string_view text);

struct ServingMetricsOptions {
  SloOptions slo;
};

// One figure the client reported against the one computed here.
struct ReportedCheck {
  std::string key;  // the client's key, "p99_ttft_ms"
  double reported = 0, computed = 0;
  bool match = false;  // within 1e-6 relative (the client rounds nothing; floating point differs)
};

// What makes the ITL tail, where the source says in which iteration each chunk came out and which
// iterations ran a prefill (the request log): a gap "spans a prefill" when an iteration after the
// previous chunk's, up to and including this chunk's, first scheduled some request.
struct PrefillInterference {
  bool known = false;
  LatencyStats with_prefill, without;  // ITL gaps that span a prefill, and the others
  int64_t tail_gaps = 0;               // gaps at or above the ITL p99 of all gaps
  int64_t tail_gaps_with_prefill = 0;
  double typical_ns = 0;       // the median decode-only gap
  double prefill_cost_ns = 0;  // median over gaps spanning a prefill of max(0, gap − typical)
  // Σ over gaps spanning a prefill of min(max(0, gap − typical), prefill_cost): what the prefills
  // added, each gap credited at most the typical prefill cost (longer stalls have other causes).
  double excess_ns = 0;
  int64_t stalls = 0;   // gaps of at least 10 x typical + prefill cost: beyond a prefill
  double stall_ns = 0;  // their total length
};

// The steady state: the longest stretch during which at least ceil(0.9 x peak) requests are active
// (between being sent / received and their last token), leaving out ramp-up and drain.
struct SteadyState {
  bool found = false;
  double start_s = 0, end_s = 0;  // on the results' clock
  int64_t peak_active = 0, threshold = 0;
  int64_t requests = 0;          // completed requests that started inside it
  LatencyStats ttft;             // of those requests
  LatencyStats itl;              // gaps that end inside it
  double output_throughput = 0;  // tokens emitted inside it / its length, per second
};

// Each completed request's latencies, kept for resampling whole requests (the diff's intervals,
// analyses/serving/serving_intervals.h). Per metric: the values sorted, and the request each came
// from (its index among the completed requests); a request gives one TTFT and E2EL, one TPOT when
// it has more than one output token, and all its ITL gaps.
struct ServingSamples {
  struct Metric {
    std::vector<double> sorted_ns;
    std::vector<uint32_t> request;
  };
  uint32_t requests = 0;  // completed
  Metric ttft, tpot, itl, e2el;
};

struct ServingMetrics {
  int64_t requests = 0, completed = 0, failed = 0;
  // Requests whose figures cannot be right (E2E latency below TTFT): counted, in no other figure.
  int64_t impossible = 0;
  int64_t input_tokens = 0, output_tokens = 0;  // of the completed requests
  double duration_s = 0;
  LatencyStats ttft, tpot, itl, e2el;
  LatencyStats queue;       // received -> first scheduled, where the source has it
  int64_t preemptions = 0;  // over completed requests, where the source has it
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;  // per s
  bool slo_set = false;
  int64_t good_requests = 0;
  double goodput = 0;             // good requests per second
  double slo_attainment_pct = 0;  // good / all requests sent
  std::vector<ReportedCheck> checks;
  int64_t mismatches = 0;
  PrefillInterference prefill;
  SteadyState steady;
  ServingSamples samples;
};

StatusOr<ServingMetrics> ComputeServingMetrics(const RequestResults& results,
                                               const ServingMetricsOptions& options);

// Section "serving" (input -1): facts, the latency table, the check against the client.
void AddServingSection(const RequestResults& results, const ServingMetrics& metrics,
                       Report& report);

// Registry entry "serving" (pipeline/registry.cc; analyses/serving/serving_analysis.cc): with
// serving results among the run's inputs (`analyze --requests FILE`), the section and, with a
// request log and a trace, the join; it leaves the metrics, the TTFT tail's queueing and the join
// for the rules on serving results. Reducible: the ranks stay spread over threads or processes.
std::unique_ptr<MultiTraceAnalysis> CreateServingAnalysis(const AnalyzeOptions& options,
                                                          const RunInputs& inputs);

}  // namespace sightline
