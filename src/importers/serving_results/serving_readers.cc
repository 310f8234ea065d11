#include "importers/serving_results/serving_readers.h"

#include "importers/serving_results/request_results.h"

namespace sightline {
namespace {

bool SniffResults(std::string_view head, ResultsFormat format) {
  return DetectResultsFormat(head) == format;
}

}  // namespace

bool SniffVllm(std::string_view h) { return SniffResults(h, ResultsFormat::kVllm); }
bool SniffSglang(std::string_view h) { return SniffResults(h, ResultsFormat::kSglang); }
bool SniffAiperf(std::string_view h) { return SniffResults(h, ResultsFormat::kAiperf); }
bool SniffTrtllmBench(std::string_view h) { return SniffResults(h, ResultsFormat::kTrtllmBench); }
bool SniffRequestLog(std::string_view h) { return SniffResults(h, ResultsFormat::kRequestLog); }

}  // namespace sightline
