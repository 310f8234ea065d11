#include "importers/serving_results/trtllm_bench_report.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>

#include "importers/serving_results/aggregate_results.h"

namespace sightline {
namespace {

Status BenchReportBad(const std::string& path, const std::string& what) {
  return InvalidInputError(
      fmt::format("{}: {}; expected the JSON that `trtllm-bench ... --report_json FILE` writes "
                  "(docs/formats/trtllm-bench-report.md)",
                  path, what));
}

}  // namespace

StatusOr<RequestResults> ParseTrtllmBenchReport(std::string_view json, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::object o, perf;
  if (parser.parse(json.data(), json.size()).get_object().get(o) != simdjson::SUCCESS) {
    return BenchReportBad(path, "not a JSON object");
  }
  if (o["performance"].get_object().get(perf) != simdjson::SUCCESS) {
    return BenchReportBad(path, "no \"performance\" object");
  }
  RequestResults r;
  r.path = path;
  r.format = "trtllm-bench-report";
  r.aggregates_only = true;
  r.has_start_times = false;
  double total_ms = 0;
  if (perf["total_latency_ms"].get_double().get(total_ms) == simdjson::SUCCESS) {
    r.duration_s = total_ms / 1e3;
  }
  simdjson::dom::object engine;
  std::string_view model = "?", version = "?", backend = "?";
  if (o["engine"].get_object().get(engine) == simdjson::SUCCESS) {
    if (engine["model"].get_string().get(model) != simdjson::SUCCESS) model = "?";
    if (engine["version"].get_string().get(version) != simdjson::SUCCESS) version = "?";
    if (engine["backend"].get_string().get(backend) != simdjson::SUCCESS) backend = "?";
  }
  r.producer =
      fmt::format("trtllm-bench (TensorRT-LLM {}, backend {}, model {})", version, backend, model);
  for (const char* group : {"world_info", "request_info", "performance", "streaming_metrics"}) {
    simdjson::dom::object g;
    if (o[group].get_object().get(g) == simdjson::SUCCESS) AddNumericAggregates(g, group, r);
  }
  simdjson::dom::object streaming;
  const bool has_streaming =
      o["streaming_metrics"].get_object().get(streaming) == simdjson::SUCCESS;
  r.not_derived.push_back(
      "trtllm-bench's report holds aggregates only: no per-request records, so no ITL per gap, "
      "no std, p90 or p99.9 beyond what it wrote, no goodput or SLO attainment, no steady state, "
      "no CDFs and no join to a trace; its percentiles are the sorted value at index int(n x p), "
      "not interpolated");
  if (!has_streaming) {
    r.not_derived.push_back(
        "no streaming_metrics: the run was not --streaming, so there is no TTFT or TPOT");
  }
  return r;
}

}  // namespace sightline
