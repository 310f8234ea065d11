#include "importers/serving_results/aiperf_results.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "base/file_io.h"
#include "base/input_data.h"
#include "base/lines.h"

namespace sightline {
namespace {

Status Bad(const std::string& path, int64_t line, const std::string& what) {
  return InvalidInputError(
      fmt::format("{}:{}: {}; expected AIPerf's per-request export profile_export.jsonl "
                  "(docs/formats/aiperf-profile-export.md)",
                  path, line, what));
}

// Seconds per unit of AIPerf's time units (MetricTimeUnit tags); 0 when not a time unit.
double SecondsPer(std::string_view unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "sec" || unit == "s") return 1;
  return 0;
}

// A metric {value, unit}: nullopt when absent; an error when present but malformed.
struct Metric {
  simdjson::dom::element value;
  std::string_view unit;
};
StatusOr<std::optional<Metric>> GetMetric(simdjson::dom::object metrics, std::string_view tag,
                                          const std::string& path, int64_t line) {
  simdjson::dom::object m;
  if (metrics[tag].get_object().get(m) != simdjson::SUCCESS) return std::optional<Metric>();
  Metric out;
  if (m["value"].get(out.value) != simdjson::SUCCESS ||
      m["unit"].get_string().get(out.unit) != simdjson::SUCCESS) {
    return Bad(path, line, fmt::format("metric \"{}\" has no \"value\" and \"unit\"", tag));
  }
  return std::optional<Metric>(out);
}

StatusOr<double> ToSeconds(double v, std::string_view unit, std::string_view tag,
                           const std::string& path, int64_t line) {
  const double per = SecondsPer(unit);
  if (per == 0) {
    return Bad(path, line,
               fmt::format("metric \"{}\" has unit \"{}\", not ns, us, ms or sec", tag, unit));
  }
  if (!std::isfinite(v) || v < 0) {
    return Bad(path, line, fmt::format("metric \"{}\" is not a non-negative time", tag));
  }
  return v * per;
}

StatusOr<std::optional<double>> Time(simdjson::dom::object metrics, std::string_view tag,
                                     const std::string& path, int64_t line) {
  ASSIGN_OR_RETURN(std::optional<Metric> m, GetMetric(metrics, tag, path, line));
  if (!m) return std::optional<double>();
  double v = 0;
  if (m->value.get_double().get(v) != simdjson::SUCCESS) {
    return Bad(path, line, fmt::format("metric \"{}\" is not a number", tag));
  }
  ASSIGN_OR_RETURN(double s, ToSeconds(v, m->unit, tag, path, line));
  return std::optional<double>(s);
}

std::optional<int64_t> Tokens(simdjson::dom::object metrics, std::string_view tag) {
  simdjson::dom::object m;
  double v = 0;
  if (metrics[tag].get_object().get(m) != simdjson::SUCCESS ||
      m["value"].get_double().get(v) != simdjson::SUCCESS || !std::isfinite(v) || v < 0 ||
      v > 1e15) {
    return std::nullopt;
  }
  return static_cast<int64_t>(std::llround(v));
}

}  // namespace

StatusOr<RequestResults> ParseAiperfResults(std::string_view text, const std::string& path) {
  RequestResults r;
  r.path = path;
  r.format = "aiperf-profile-export";
  r.producer = "AIPerf profile_export.jsonl";
  r.ttft_from = "the client sending the request";
  simdjson::dom::parser parser;
  int64_t first_start_ns = std::numeric_limits<int64_t>::max(), last_end_ns = 0;
  std::vector<int64_t> start_ns;
  double tpot_sum_s = 0;  // AIPerf's own per-request inter_token_latency, to check TPOT against
  int64_t tpot_n = 0;
  int64_t ok_first_start_ns = std::numeric_limits<int64_t>::max(), ok_last_response_ns = 0;
  LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    const int64_t number = lines.number();
    if (IsBlankLine(line)) continue;
    simdjson::dom::object o, meta;
    if (parser.parse(line.data(), line.size()).get_object().get(o) != simdjson::SUCCESS) {
      return Bad(path, number, "not a JSON object on one line");
    }
    if (o["metadata"].get_object().get(meta) != simdjson::SUCCESS) {
      return Bad(path, number, "no \"metadata\" object");
    }
    std::string_view phase = "profiling";
    if (meta["benchmark_phase"].get_string().get(phase) == simdjson::SUCCESS &&
        phase != "profiling") {
      r.diagnostics.Add(DiagCode::kServingRecordSkipped, 1,
                        fmt::format("benchmark_phase \"{}\"", phase));
      continue;
    }
    int64_t start = 0, stop = 0;
    if (meta["request_start_ns"].get_int64().get(start) != simdjson::SUCCESS ||
        meta["request_end_ns"].get_int64().get(stop) != simdjson::SUCCESS || start < 0 ||
        stop < start) {
      return Bad(path, number,
                 "\"metadata\" needs integers 0 <= \"request_start_ns\" <= \"request_end_ns\"");
    }
    RequestRecord q;
    std::string_view id;
    if (meta["x_request_id"].get_string().get(id) == simdjson::SUCCESS) q.id = std::string(id);
    simdjson::dom::object err;
    if (o["error"].get_object().get(err) == simdjson::SUCCESS) {
      std::string_view type = "error", message;
      if (err["type"].get_string().get(type) != simdjson::SUCCESS) type = "error";
      if (err["message"].get_string().get(message) != simdjson::SUCCESS) message = "";
      q.success = false;
      q.error = fmt::format("{}: {}", type, message);
    }
    simdjson::dom::object metrics;
    const bool has_metrics = o["metrics"].get_object().get(metrics) == simdjson::SUCCESS;
    if (q.success) {
      if (!has_metrics) return Bad(path, number, "a successful record without \"metrics\"");
      ASSIGN_OR_RETURN(std::optional<double> ttft,
                       Time(metrics, "time_to_first_token", path, number));
      ASSIGN_OR_RETURN(std::optional<double> latency,
                       Time(metrics, "request_latency", path, number));
      const std::optional<int64_t> osl = Tokens(metrics, "output_sequence_length");
      if (!ttft || !latency || !osl) {
        // Non-streaming runs have no TTFT; a record without it has no place in these figures.
        r.diagnostics.Add(DiagCode::kServingRecordSkipped, 1,
                          "no time_to_first_token, request_latency or output_sequence_length "
                          "(non-streaming run?)");
        continue;
      }
      q.ttft_s = *ttft;
      q.latency_s = *latency;
      q.output_tokens = *osl;
      q.input_tokens = Tokens(metrics, "input_sequence_length").value_or(0);
      ASSIGN_OR_RETURN(std::optional<Metric> icl,
                       GetMetric(metrics, "inter_chunk_latency", path, number));
      if (icl) {
        simdjson::dom::array gaps;
        if (icl->value.get_array().get(gaps) != simdjson::SUCCESS) {
          return Bad(path, number, "metric \"inter_chunk_latency\" is not a list");
        }
        for (simdjson::dom::element g : gaps) {
          double v = 0;
          if (g.get_double().get(v) != simdjson::SUCCESS) {
            return Bad(path, number, "metric \"inter_chunk_latency\" holds a non-number");
          }
          ASSIGN_OR_RETURN(double s, ToSeconds(v, icl->unit, "inter_chunk_latency", path, number));
          q.itl_s.push_back(s);
        }
      }
      ASSIGN_OR_RETURN(std::optional<double> itl,
                       Time(metrics, "inter_token_latency", path, number));
      if (itl && q.output_tokens > 1) tpot_sum_s += *itl, ++tpot_n;
      // AIPerf's benchmark_duration: from the first successful request's start to the last
      // successful response (start + request_latency); failed and timed-out requests take no
      // part in it (aiperf/metrics/types/{min_request,max_response,benchmark_duration}_metric).
      ok_first_start_ns = std::min(ok_first_start_ns, start);
      ok_last_response_ns =
          std::max(ok_last_response_ns, start + static_cast<int64_t>(std::llround(*latency * 1e9)));
    } else if (has_metrics) {
      q.input_tokens = Tokens(metrics, "error_isl").value_or(0);
    }
    first_start_ns = std::min(first_start_ns, start);
    last_end_ns = std::max(last_end_ns, stop);
    start_ns.push_back(start);
    r.requests.push_back(std::move(q));
  }
  if (r.requests.empty()) {
    return Bad(path, std::max<int64_t>(lines.number(), 1), "no profiling-phase request records");
  }
  // Wall-clock epoch ns lose precision as doubles: times are kept from the first request's start.
  for (size_t i = 0; i < r.requests.size(); ++i) {
    r.requests[i].start_s = static_cast<double>(start_ns[i] - first_start_ns) * 1e-9;
  }
  const bool any_ok = ok_last_response_ns > ok_first_start_ns;
  r.duration_s = any_ok ? static_cast<double>(ok_last_response_ns - ok_first_start_ns) * 1e-9
                        : static_cast<double>(last_end_ns - first_start_ns) * 1e-9;
  if (!(r.duration_s > 0)) return Bad(path, lines.number(), "the records span no time");
  // AIPerf's inter_token_latency per request is (request_latency - TTFT) / (OSL - 1): TPOT.
  if (tpot_n > 0) r.reported["mean_tpot_ms"] = tpot_sum_s / static_cast<double>(tpot_n) * 1e3;
  r.notes.push_back(
      any_ok ? "the benchmark duration is AIPerf's: from the first successful request's start to "
               "the last successful response; failed and timed-out requests lie outside it"
             : "no request succeeded: the benchmark duration runs from the first request's start "
               "to the last request's end");
  r.not_derived.push_back(
      "start times are wall-clock (time.time_ns), so no join to a trace's monotonic clock");
  return r;
}

Status AddAiperfSummary(RequestResults& results, const std::string& summary_path) {
  StatusOr<std::string> text = ReadInput(summary_path);
  if (!text.ok()) {
    return text.status().code() == StatusCode::kNotFound ? Status::Ok() : text.status();
  }
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(*text).get_object().get(o) != simdjson::SUCCESS) {
    return InvalidInputError(
        fmt::format("{}: not a JSON object; expected AIPerf's summary beside {} (or remove it)",
                    summary_path, results.path));
  }
  // 0.8.0 and later: one member per metric, {unit, avg, p50, p99, std, ...}. Older summaries
  // (under "records") are not compared.
  auto stat = [&](std::string_view metric, std::string_view field, double* out) {
    simdjson::dom::object m;
    return o[metric].get_object().get(m) == simdjson::SUCCESS &&
           m[field].get_double().get(*out) == simdjson::SUCCESS && std::isfinite(*out);
  };
  double v = 0;
  int compared = 0;
  for (const auto& [metric, ours] : {std::pair{"request_throughput", "request_throughput"},
                                     std::pair{"output_token_throughput", "output_throughput"},
                                     std::pair{"total_token_throughput", "total_token_throughput"},
                                     std::pair{"benchmark_duration", "duration"}}) {
    if (stat(metric, "avg", &v)) results.reported[ours] = v, ++compared;
  }
  // Distributions in ms: TTFT, E2E latency, and AIPerf's per-request inter_token_latency (TPOT).
  for (const auto& [metric, ours] :
       {std::pair{"time_to_first_token", "ttft"}, std::pair{"request_latency", "e2el"},
        std::pair{"inter_token_latency", "tpot"}}) {
    simdjson::dom::object m;
    std::string_view unit;
    if (o[metric].get_object().get(m) != simdjson::SUCCESS ||
        m["unit"].get_string().get(unit) != simdjson::SUCCESS || unit != "ms") {
      continue;
    }
    for (const auto& [field, name] :
         {std::pair{"avg", "mean"}, std::pair{"p50", "median"}, std::pair{"p90", "p90"},
          std::pair{"p99", "p99"}, std::pair{"std", "std"}}) {
      if (stat(metric, field, &v)) {
        results.reported[fmt::format("{}_{}_ms", name, ours)] = v;
        ++compared;
      }
    }
  }
  if (compared > 0) {
    results.notes.push_back(fmt::format(
        "AIPerf's own figures from {} are checked against these (the client_check table)",
        summary_path));
  }
  return Status::Ok();
}

}  // namespace sightline
