// Per-request results of a serving run: the input of the serving metrics
// (serving/serving_metrics.h). Not a timeline: requests join a trace later by time or iteration.
// Read, recognised from content:
// - vLLM's `vllm bench serve --save-result --save-detailed` JSON (seconds on the client's clock:
// TTFT
//   starts when the client sends the request; docs/formats/vllm-bench-json.md);
// - the instrument library's request log (SIGHTLINE_REQUEST_LOG, JSON lines on the server's
//   CLOCK_MONOTONIC: TTFT starts when the server receives the request;
//   docs/formats/request-log.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

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
};

// Reads a results file; errors name the file, what is wrong and what to do (exit 2 in the CLI).
StatusOr<RequestResults> ReadRequestResults(const std::string& path);
StatusOr<RequestResults> ParseRequestResults(std::string_view json, const std::string& path);

}  // namespace sightline
