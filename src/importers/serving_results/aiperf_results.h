// Reader of AIPerf's per-request export `artifacts/<run>/profile_export.jsonl` (one JSON object per
// request: metadata with wall-clock ns stamps, metrics as {value, unit}, error;
// docs/formats/aiperf-profile-export.md) into per-request results (serving/request_results.h).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "importers/serving_results/request_results.h"

namespace sightline {

// Errors are InvalidInput with "PATH:LINE: what is wrong". Records of another benchmark phase
// than "profiling" (warm-up) and successful records without the metrics needed are counted as
// diagnostics and left out.
StatusOr<RequestResults> ParseAiperfResults(std::string_view text, const std::string& path);

// AIPerf writes its own figures to profile_export_aiperf.json beside the records: where that file
// is (0.8.0's layout), its throughputs, benchmark duration and TTFT / E2E latency / TPOT
// statistics become `reported`, so that every figure is checked. An absent file is fine; one that
// is not JSON is an error naming it.
Status AddAiperfSummary(RequestResults& results, const std::string& summary_path);

}  // namespace sightline
