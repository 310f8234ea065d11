// Reader of SGLang's `python -m sglang.bench_serving --output-file F --output-details` results:
// JSON lines, one object per benchmark run appended to the file, with the run's aggregates and,
// with
// --output-details, per-request lists (docs/formats/sglang-bench-serving.md). Feeds the serving
// metrics (analyses/serving/serving_metrics.h) like the vLLM reader.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "importers/serving_results/request_results.h"

namespace sightline {

// The last run in the file that has per-request lists; earlier runs are counted
// (serving_runs_skipped). Errors are InvalidInput with "PATH:LINE: what is wrong".
StatusOr<RequestResults> ParseSglangResults(std::string_view text, const std::string& path);

}  // namespace sightline
