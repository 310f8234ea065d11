#include "importers/serving_results/request_results.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <tuple>

#include "base/file_io.h"
#include "base/input_data.h"
#include "importers/serving_results/aggregate_results.h"
#include "importers/serving_results/aiperf_results.h"
#include "importers/serving_results/request_log.h"
#include "importers/serving_results/sglang_results.h"
#include "importers/serving_results/trtllm_bench_report.h"

namespace sightline {
namespace {

constexpr char kRequestResultsDoc[] = "docs/formats/vllm-bench-json.md";

Status Bad(const std::string& path, const std::string& what) {
  return InvalidInputError(fmt::format(
      "{}: {}; expected the JSON that `vllm bench serve --save-result --save-detailed` writes "
      "(see {}), SGLang's bench_serving --output-details JSON lines, AIPerf's "
      "profile_export.jsonl, trtllm-bench --report_json, or a SIGHTLINE_REQUEST_LOG file "
      "(docs/formats/request-log.md)",
      path, what, kRequestResultsDoc));
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
  std::string_view backend = "?", model = "?";
  if (o["backend"].get_string().get(backend) != simdjson::SUCCESS) backend = "?";
  if (o["model_id"].get_string().get(model) != simdjson::SUCCESS) model = "?";
  const std::string producer =
      fmt::format("vLLM bench serve (backend {}, model {})", backend, model);
  // `--save-result` without `--save-detailed` (and vLLM's nightly files, without "duration"):
  // aggregates only, shown as written.
  simdjson::dom::element ttfts_element;
  if (o["ttfts"].get(ttfts_element) != simdjson::SUCCESS && HasServingAggregates(o)) {
    return AggregateResultsOf(o, path, "vllm-bench-json", producer,
                              "run `vllm bench serve --save-result --save-detailed` to keep them");
  }
  RequestResults r;
  r.path = path;
  r.format = "vllm-bench-json";
  r.ttft_from = "the client sending the request";
  r.producer = producer;
  if (o["duration"].get_double().get(r.duration_s) != simdjson::SUCCESS ||
      !std::isfinite(r.duration_s) || r.duration_s <= 0) {
    return Bad(path, "no positive \"duration\" (the benchmark's length in seconds)");
  }

  int64_t n = -1;
  ASSIGN_OR_RETURN(simdjson::dom::array ttfts, RequestArray(o, "ttfts", &n, path));
  ASSIGN_OR_RETURN(simdjson::dom::array itls, RequestArray(o, "itls", &n, path));
  ASSIGN_OR_RETURN(simdjson::dom::array input_lens, RequestArray(o, "input_lens", &n, path));
  ASSIGN_OR_RETURN(simdjson::dom::array output_lens, RequestArray(o, "output_lens", &n, path));
  // Optional per-request arrays: vLLM wrote no "latencies" before 2026-08 (E2E latency is then
  // TTFT + the sum of the ITLs, vLLM's own definition), older clients no start_times, some no
  // errors. One that is there must have an entry per request: an "errors" list one short would
  // otherwise count failed requests as completed.
  simdjson::dom::array latencies, starts, errors;
  const bool has_latencies = o["latencies"].get_array().get(latencies) == simdjson::SUCCESS;
  const bool has_starts = o["start_times"].get_array().get(starts) == simdjson::SUCCESS;
  const bool has_errors = o["errors"].get_array().get(errors) == simdjson::SUCCESS;
  for (const auto& [key, present, array] : {std::tuple{"latencies", has_latencies, &latencies},
                                            std::tuple{"start_times", has_starts, &starts},
                                            std::tuple{"errors", has_errors, &errors}}) {
    if (present && static_cast<int64_t>(array->size()) != n) {
      return Bad(path, fmt::format("\"{}\" has {} entries, other per-request arrays {}", key,
                                   array->size(), n));
    }
  }
  r.has_start_times = has_starts;
  if (!has_latencies) {
    r.notes.push_back(
        "E2E latency is TTFT + the sum of the ITLs (vLLM's definition): this file has no "
        "\"latencies\", as vLLM wrote before 2026-08");
  }
  r.requests.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < r.requests.size(); ++i) {
    RequestRecord& q = r.requests[i];
    if (has_errors) {
      std::string_view err;
      if (errors.at(i).get_string().get(err) == simdjson::SUCCESS) q.error = std::string(err);
      q.success = q.error.empty();
    }
    ASSIGN_OR_RETURN(q.ttft_s, Seconds(ttfts.at(i), "ttfts", i, path));
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
    if (has_latencies) {
      ASSIGN_OR_RETURN(q.latency_s, Seconds(latencies.at(i), "latencies", i, path));
    } else {
      q.latency_s = q.ttft_s;
      for (double s : q.itl_s) q.latency_s += s;
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
    if (has("\"total_output_tokens_retokenized\"") || has("\"sharegpt_output_len\"") ||
        has("\"backend\": \"sglang\"")) {
      return ResultsFormat::kSglang;
    }
    return ResultsFormat::kVllm;
  }
  return ResultsFormat::kUnknown;
}

StatusOr<RequestResults> ReadRequestResults(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadInput(path));  // results are often published gzip'd
  switch (DetectResultsFormat(std::string_view(text).substr(0, 1 << 16))) {
    case ResultsFormat::kRequestLog:
      return ParseRequestLog(text, path);
    case ResultsFormat::kSglang:
      return ParseSglangResults(text, path);
    case ResultsFormat::kAiperf: {
      ASSIGN_OR_RETURN(RequestResults r, ParseAiperfResults(text, path));
      const size_t slash = path.rfind('/');
      const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
      RETURN_IF_ERROR(AddAiperfSummary(r, dir + "profile_export_aiperf.json"));
      return r;
    }
    case ResultsFormat::kTrtllmBench:
      return ParseTrtllmBenchReport(text, path);
    default:
      return ParseRequestResults(text, path);  // vLLM, or its error naming what is missing
  }
}

}  // namespace sightline
