#include "serving/request_results.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>

#include "base/file_io.h"
#include "serving/aiperf_results.h"
#include "serving/request_log.h"
#include "serving/sglang_results.h"
#include "serving/trtllm_bench_report.h"

namespace sightline {
namespace {

constexpr char kFormatDoc[] = "docs/formats/vllm-bench-json.md";

Status Bad(const std::string& path, const std::string& what) {
  return InvalidInputError(fmt::format(
      "{}: {}; expected the JSON that `vllm bench serve --save-result --save-detailed` writes "
      "(see {}), SGLang's bench_serving --output-details JSON lines, AIPerf's "
      "profile_export.jsonl, trtllm-bench --report_json, or a SIGHTLINE_REQUEST_LOG file "
      "(docs/formats/request-log.md)",
      path, what, kFormatDoc));
}

// A per-request array member; its length must be `n` (n < 0: sets n).
StatusOr<simdjson::dom::array> RequestArray(simdjson::dom::object o, std::string_view key,
                                            int64_t* n, const std::string& path) {
  simdjson::dom::array a;
  if (o[key].get_array().get(a) != simdjson::SUCCESS) {
    return Bad(path, fmt::format("no per-request array \"{}\" (was the benchmark run with "
                                 "--save-detailed?)",
                                 key));
  }
  const int64_t size = static_cast<int64_t>(a.size());
  if (*n < 0) *n = size;
  if (size != *n) {
    return Bad(path,
               fmt::format("\"{}\" has {} entries, other per-request arrays {}", key, size, *n));
  }
  return a;
}

StatusOr<double> Seconds(simdjson::dom::element e, std::string_view key, size_t i,
                         const std::string& path) {
  double v = 0;
  if (e.get_double().get(v) != simdjson::SUCCESS || !std::isfinite(v) || v < 0) {
    return Bad(path, fmt::format("\"{}\"[{}] is not a non-negative number of seconds", key, i));
  }
  return v;
}

StatusOr<int64_t> Count(simdjson::dom::element e, std::string_view key, size_t i,
                        const std::string& path) {
  int64_t v = 0;
  if (e.get_int64().get(v) != simdjson::SUCCESS || v < 0) {
    return Bad(path, fmt::format("\"{}\"[{}] is not a non-negative integer", key, i));
  }
  return v;
}

}  // namespace

StatusOr<RequestResults> ParseRequestResults(std::string_view json, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(json.data(), json.size()).get(doc); err != simdjson::SUCCESS) {
    return Bad(path, fmt::format("not valid JSON ({})", simdjson::error_message(err)));
  }
  simdjson::dom::object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS) return Bad(path, "not a JSON object");
  RequestResults r;
  r.path = path;
  r.format = "vllm-bench-json";
  r.ttft_from = "the client sending the request";
  if (o["duration"].get_double().get(r.duration_s) != simdjson::SUCCESS ||
      !std::isfinite(r.duration_s) || r.duration_s <= 0) {
    return Bad(path, "no positive \"duration\" (the benchmark's length in seconds)");
  }
  std::string_view backend = "?", model = "?";
  if (o["backend"].get_string().get(backend) != simdjson::SUCCESS) backend = "?";
  if (o["model_id"].get_string().get(model) != simdjson::SUCCESS) model = "?";
  r.producer = fmt::format("vLLM bench serve (backend {}, model {})", backend, model);

  int64_t n = -1;
  ASSIGN_OR_RETURN(simdjson::dom::array ttfts, RequestArray(o, "ttfts", &n, path));
  ASSIGN_OR_RETURN(simdjson::dom::array itls, RequestArray(o, "itls", &n, path));
  ASSIGN_OR_RETURN(simdjson::dom::array latencies, RequestArray(o, "latencies", &n, path));
  ASSIGN_OR_RETURN(simdjson::dom::array input_lens, RequestArray(o, "input_lens", &n, path));
  ASSIGN_OR_RETURN(simdjson::dom::array output_lens, RequestArray(o, "output_lens", &n, path));
  // Optional per-request arrays: older clients write no start_times, some no errors.
  simdjson::dom::array starts, errors;
  const bool has_starts = o["start_times"].get_array().get(starts) == simdjson::SUCCESS &&
                          static_cast<int64_t>(starts.size()) == n;
  r.has_start_times = has_starts;
  const bool has_errors = o["errors"].get_array().get(errors) == simdjson::SUCCESS &&
                          static_cast<int64_t>(errors.size()) == n;
  r.requests.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < r.requests.size(); ++i) {
    RequestRecord& q = r.requests[i];
    if (has_errors) {
      std::string_view err;
      if (errors.at(i).get_string().get(err) == simdjson::SUCCESS) q.error = std::string(err);
      q.success = q.error.empty();
    }
    ASSIGN_OR_RETURN(q.ttft_s, Seconds(ttfts.at(i), "ttfts", i, path));
    ASSIGN_OR_RETURN(q.latency_s, Seconds(latencies.at(i), "latencies", i, path));
    ASSIGN_OR_RETURN(q.input_tokens, Count(input_lens.at(i), "input_lens", i, path));
    ASSIGN_OR_RETURN(q.output_tokens, Count(output_lens.at(i), "output_lens", i, path));
    if (has_starts) {
      ASSIGN_OR_RETURN(q.start_s, Seconds(starts.at(i), "start_times", i, path));
    }
    simdjson::dom::array gaps;
    if (itls.at(i).get_array().get(gaps) != simdjson::SUCCESS) {
      return Bad(path, fmt::format("\"itls\"[{}] is not an array of seconds", i));
    }
    for (simdjson::dom::element g : gaps) {
      ASSIGN_OR_RETURN(double s, Seconds(g, "itls", i, path));
      q.itl_s.push_back(s);
    }
  }
  // The client's own aggregates: every numeric top-level member named like "p99_ttft_ms".
  for (auto [key, value] : o) {
    double v = 0;
    if (key.size() > 3 && key.substr(key.size() - 3) == "_ms" &&
        value.get_double().get(v) == simdjson::SUCCESS) {
      r.reported[std::string(key)] = v;
    }
    if ((key == "request_throughput" || key == "output_throughput" || key == "request_goodput" ||
         key == "total_token_throughput") &&
        value.get_double().get(v) == simdjson::SUCCESS) {
      r.reported[std::string(key)] = v;
    }
  }
  return r;
}

ResultsFormat DetectResultsFormat(std::string_view head) {
  if (LooksLikeRequestLog(head)) return ResultsFormat::kRequestLog;
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '{') return ResultsFormat::kUnknown;
  if (head.find("\"traceEvents\"") != std::string_view::npos) return ResultsFormat::kUnknown;
  const auto has = [head](std::string_view key) {
    return head.find(key) != std::string_view::npos;
  };
  std::string_view line = head.substr(first);
  line = line.substr(0, line.find('\n'));
  // AIPerf: one record per line, its metadata first.
  if (line.find("\"metadata\"") != std::string_view::npos &&
      line.find("\"request_start_ns\"") != std::string_view::npos) {
    return ResultsFormat::kAiperf;
  }
  // trtllm-bench: the statistics dict opens with "engine", then machine and world information.
  if (has("\"engine\"") && (has("\"world_info\"") || has("\"request_info\""))) {
    return ResultsFormat::kTrtllmBench;
  }
  if (has("\"duration\"") && has("\"completed\"")) {
    // Arguments only SGLang's bench_serving writes, ahead of the per-request lists.
    if (has("\"total_output_tokens_retokenized\"") || has("\"sharegpt_output_len\"")) {
      return ResultsFormat::kSglang;
    }
    return ResultsFormat::kVllm;
  }
  return ResultsFormat::kUnknown;
}

StatusOr<RequestResults> ReadRequestResults(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  switch (DetectResultsFormat(std::string_view(text).substr(0, 1 << 16))) {
    case ResultsFormat::kRequestLog:
      return ParseRequestLog(text, path);
    case ResultsFormat::kSglang:
      return ParseSglangResults(text, path);
    case ResultsFormat::kAiperf:
      return ParseAiperfResults(text, path);
    case ResultsFormat::kTrtllmBench:
      return ParseTrtllmBenchReport(text, path);
    default:
      return ParseRequestResults(text, path);  // vLLM, or its error naming what is missing
  }
}

}  // namespace sightline
