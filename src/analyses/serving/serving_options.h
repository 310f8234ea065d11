// The serving analysis's options (serving_metrics.h, and the "serving" multi-trace analysis): the
// benchmark's per-request results and the SLOs they are checked against. Its own header, in the
// common room (src/CMakeLists.txt), so that AnalyzeOptions can hold it.
#pragma once

#include <memory>
#include <optional>

namespace sightline {

struct RequestResults;  // importers/serving_results/request_results.h

// --slo ttft=MS,tpot=MS,e2el=MS: a request is good when it meets every SLO given (serving metrics).
struct SloOptions {
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;
  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};

struct ServingOptions {
  // --requests (or serving results among the inputs): a serving benchmark's per-request results;
  // may be null.
  std::shared_ptr<const RequestResults> requests;
  SloOptions slo;  // --slo
};

}  // namespace sightline
