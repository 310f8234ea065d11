// Per-request results of a serving run: the input of the serving metrics
// (analyses/serving/serving_metrics.h). Not a timeline: requests join a trace later by time or
// iteration. Read, recognised from content:
// - vLLM's `vllm bench serve --save-result --save-detailed` JSON (seconds on the client's clock:
// TTFT
//   starts when the client sends the request; docs/formats/vllm-bench-json.md);
// - the instrument library's request log (SIGHTLINE_REQUEST_LOG, JSON lines on the server's
//   CLOCK_MONOTONIC: TTFT starts when the server receives the request;
//   docs/formats/request-log.md);
// - SGLang's `bench_serving --output-details` JSON lines (docs/formats/sglang-bench-serving.md);
// - AIPerf's `profile_export.jsonl` (docs/formats/aiperf-profile-export.md);
// - `trtllm-bench --report_json` (aggregates only; docs/formats/trtllm-bench-report.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/diagnostics.h"
#include "report/report.h"

namespace sightline {

struct RequestRecord {
  bool success = true;        // vLLM: an empty "errors" entry
  double start_s = 0;         // when the client sent it (client clock)
  double ttft_s = 0;          // send -> first token
  double latency_s = 0;       // send -> last token (E2EL)
  std::vector<double> itl_s;  // gaps between streamed chunks after the first
  // Request log only: the iteration each streamed chunk came out in (itl_s[i] ends at chunk i + 1);
  // empty when unknown.
  std::vector<int64_t> chunk_iterations;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::string error;
  double queue_s = -1;  // received -> first scheduled; -1 unknown
  int64_t preemptions = 0;
  int64_t first_iteration = -1, last_iteration = -1;  // iterations its events fell in; -1 unknown
  std::string id;
};

struct RequestResults {
  std::string path;
  std::string format;     // "vllm-bench-json", "sightline-request-log"
  std::string producer;   // "vLLM bench serve (backend vllm, model ...)"
  std::string ttft_from;  // "the client sending the request" / "the server receiving it"
  double duration_s = 0;  // the benchmark's own duration (vLLM), first arrival to last event (log)
  std::vector<RequestRecord> requests;
  // Request log only: the iterations in which some request was first scheduled (ran its prefill).
  std::vector<int64_t> prefill_iterations;  // sorted, distinct
  // The aggregate figures the client wrote itself ("p99_ttft_ms" -> value), to compare against.
  std::map<std::string, double> reported;
  // False when the source gives no per-request send time (SGLang): no steady state, no time join.
  bool has_start_times = true;
  // True when E2EL is TTFT + the sum of the ITL gaps (the last content chunk), because the source
  // keeps no per-request latency (SGLang); the client's own E2EL and TPOT figures are then not
  // comparable and are not checked.
  bool latency_from_chunks = false;
  // What this source cannot give, and how a figure was derived where the source does not state
  // it, one sentence each; shown as notes of the serving section.
  std::vector<std::string> not_derived;
  std::vector<std::string> notes;
  // Records read but not used (counted, never silently lost); shown with the report's inputs.
  Diagnostics diagnostics;

  // Sources that hold aggregates only (trtllm-bench --report_json): no per-request records; the
  // figures are shown as the tool wrote them.
  struct Aggregate {
    std::string group;  // "performance", "streaming_metrics.ttft_percentiles"
    std::string name;   // the tool's key, "p99"
    double value = 0;   // in `unit` (durations converted to ns)
    Unit unit = Unit::kNumber;
  };
  bool aggregates_only = false;
  std::vector<Aggregate> aggregates;
};

// The formats ReadRequestResults recognises, from the start of a file's text.
enum class ResultsFormat { kUnknown, kVllm, kSglang, kAiperf, kTrtllmBench, kRequestLog };
ResultsFormat DetectResultsFormat(std::string_view head);

// Reads a results file; errors name the file, what is wrong and what to do (exit 2 in the CLI).
StatusOr<RequestResults> ReadRequestResults(const std::string& path);
StatusOr<RequestResults> ParseRequestResults(std::string_view json, const std::string& path);

}  // namespace sightline
