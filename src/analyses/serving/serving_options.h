// The serving analysis's options (serving_metrics.h, and the "serving" multi-trace analysis): the
// SLOs the requests are checked against (the results themselves are RunInputs::requests). Its own
// header, in the common room (src/CMakeLists.txt), so that AnalyzeOptions can hold it.
#pragma once

#include <optional>

namespace sightline {

// --slo ttft=MS,tpot=MS,e2el=MS: a request is good when it meets every SLO given (serving metrics).
struct SloOptions {
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;
  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};

struct ServingOptions {
  SloOptions slo;  // --slo
};

}  // namespace sightline
