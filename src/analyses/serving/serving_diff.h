// `sightline diff A B` of two serving runs (request results or request logs): TTFT, TPOT, ITL and
// E2EL percentiles and throughput side by side, and the CI gate on the p99 latencies and the output
// throughput (docs/analyses/serving.md, "Diff").
#pragma once

#include <optional>
#include <string>

#include "analyses/serving/serving_metrics.h"
#include "base/status.h"
#include "importers/serving_results/request_results.h"
#include "report/report.h"

namespace sightline {

// Appends the "serving_diff" section (and "serving_gate" with a threshold) to a report whose inputs
// 0 and 1 are the baseline and the candidate; sets Report::gate when p99 TTFT, TPOT or ITL grew, or
// output throughput fell, by more than `fail_if_slower_pct`.
void AddServingDiff(const ServingMetrics& baseline, const ServingMetrics& candidate,
                    std::optional<double> fail_if_slower_pct, Report& report);

}  // namespace sightline
