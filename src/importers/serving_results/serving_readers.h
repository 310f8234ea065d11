// The serving results' readers for the front door (importers/inputs.h): each format's sniffer
// (DetectResultsFormat over the head) and its place in the sniffing order. All of them read with
// ReadRequestResults (request_results.h).
#pragma once

#include <string_view>

#include "base/input_sniff.h"

namespace sightline {

bool SniffRequestLog(std::string_view head);
bool SniffAiperf(std::string_view head);
bool SniffTrtllmBench(std::string_view head);
bool SniffSglang(std::string_view head);
bool SniffVllm(std::string_view head);

// JSON formats recognised by their keys, after the text formats with a fixed start (ncu, the
// sweep); the request log (schema_version, request) before Sightline's iteration log, whose
// sniffer refuses a "request" key but would take the rest.
inline constexpr ReaderSpec kRequestLogReader = {
    "request-log", "Sightline request log (JSON lines: schema_version, request)", 700,
    &SniffRequestLog};
inline constexpr ReaderSpec kAiperfReader = {
    "aiperf-records", "AIPerf per-request records (profile_export.jsonl)", 900, &SniffAiperf};
inline constexpr ReaderSpec kTrtllmBenchReader = {
    "trtllm-bench-report", "trtllm-bench --report_json (aggregates)", 1000, &SniffTrtllmBench};
inline constexpr ReaderSpec kSglangReader = {
    "sglang-bench-serving", "SGLang bench_serving results (--output-file)", 1100, &SniffSglang};
// vLLM's results are the most general of these (a JSON object with a few result keys): last of
// the serving formats.
inline constexpr ReaderSpec kVllmReader = {
    "vllm-bench-results", "vLLM benchmark_serving / vllm bench serve results (--save-result)", 1200,
    &SniffVllm};

}  // namespace sightline
