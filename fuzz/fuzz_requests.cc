// Serving results for `analyze --requests`: Sightline's request log (JSON lines) and a benchmark's
// results (vLLM `bench serve` JSON), each reader on every input (as ReadRequestResults picks one
// by sniffing, a reader would otherwise only see inputs that look like its format).
#include "fuzz_support.h"
#include "serving/request_log.h"
#include "serving/request_results.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = sightline::fuzz::AsView(data, size);
  (void)sightline::LooksLikeRequestLog(text);
  (void)sightline::ParseRequestLog(text, "fuzz.jsonl");
  (void)sightline::ParseRequestResults(text, "fuzz.json");
  return 0;
}
