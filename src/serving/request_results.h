// Per-request results of a serving benchmark, as the benchmark clients write them: the input of the
// serving metrics (serving/serving_metrics.h). Not a timeline: requests join a trace later by time.
// Read: vLLM's `vllm bench serve --save-result --save-detailed` JSON (times in seconds, on the
// client's clock: TTFT starts when the client sends the request). docs/formats/vllm-bench-json.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace sightline {

struct RequestRecord {
  bool success = true;      // vLLM: an empty "errors" entry
  double start_s = 0;       // when the client sent it (client clock)
  double ttft_s = 0;        // send -> first token
  double latency_s = 0;     // send -> last token (E2EL)
  std::vector<double> itl_s;  // gaps between streamed chunks after the first
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::string error;
};

struct RequestResults {
  std::string path;
  std::string format;    // "vllm-bench-json"
  std::string producer;  // "vLLM bench serve (backend vllm, model ...)"
  double duration_s = 0;  // the benchmark's own duration: the throughput window
  std::vector<RequestRecord> requests;
  // The aggregate figures the client wrote itself ("p99_ttft_ms" -> value), to compare against.
  std::map<std::string, double> reported;
};

// Reads a results file; errors name the file, what is wrong and what to do (exit 2 in the CLI).
StatusOr<RequestResults> ReadRequestResults(const std::string& path);
StatusOr<RequestResults> ParseRequestResults(std::string_view json, const std::string& path);

}  // namespace sightline
