// `sightline diff A B` of two serving runs (request results or request logs): TTFT, TPOT, ITL and
// E2EL percentiles and throughput side by side, and the CI gate on the p99 latencies and the output
// throughput (docs/analyses/serving.md, "Diff").
#pragma once

#include <optional>
#include <string>
#include <vector>

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

// The same with several runs per side (`diff A1 A2 -- B1 B2` of serving results): `baseline` and
// `candidate` are the metrics of each side's runs pooled (PoolServingRuns), `runs_*` each run's
// own. With 3 runs or more in all, every interval also holds the change ± Student's t over the
// runs' own figures (the spread between runs, which resampling requests cannot see), and the
// throughputs get intervals too. Empty `runs_*`: one run, the pooled metrics.
void AddServingDiffRuns(const ServingMetrics& baseline, const std::vector<ServingMetrics>& runs_b,
                        const ServingMetrics& candidate, const std::vector<ServingMetrics>& runs_a,
                        std::optional<double> fail_if_slower_pct, Report& report);

// The requests of several runs of one side as one result: durations add up (so throughputs are
// totals over the runs' time); start times are not one timeline, so none is kept.
RequestResults PoolServingRuns(std::vector<RequestResults> runs);

}  // namespace sightline
