// Serving results for `analyze --requests`: Sightline's request log (JSON lines) and benchmarks'
// results (vLLM `bench serve` JSON, SGLang `bench_serving` JSON lines, AIPerf profile_export.jsonl,
// trtllm-bench --report_json), each reader on every input (as ReadRequestResults picks one by
// sniffing, a reader would otherwise only see inputs that look like its format).
#include "fuzz_support.h"
#include "importers/serving_results/aiperf_results.h"
#include "importers/serving_results/request_log.h"
#include "importers/serving_results/request_results.h"
#include "importers/serving_results/sglang_results.h"
#include "importers/serving_results/trtllm_bench_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = sightline::fuzz::AsView(data, size);
  (void)sightline::LooksLikeRequestLog(text);
  (void)sightline::DetectResultsFormat(text);
  (void)sightline::ParseRequestLog(text, "fuzz.jsonl");
  (void)sightline::ParseRequestResults(text, "fuzz.json");
  (void)sightline::ParseSglangResults(text, "fuzz.jsonl");
  (void)sightline::ParseAiperfResults(text, "fuzz.jsonl");
  (void)sightline::ParseTrtllmBenchReport(text, "fuzz.json");
  return 0;
}
