// Reader of `trtllm-bench ... throughput|latency --report_json FILE`: aggregates only (engine,
// world, request and performance figures, and with --streaming TTFT/TPOT percentiles;
// docs/formats/trtllm-bench-report.md). There are no per-request records, so Sightline shows the
// figures as written and says what cannot be derived from them.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "importers/serving_results/request_results.h"

namespace sightline {

// Errors are InvalidInput naming the file and what is missing.
StatusOr<RequestResults> ParseTrtllmBenchReport(std::string_view json, const std::string& path);

}  // namespace sightline
