// Charts of the serving section (Report series; the HTML report draws them): the cumulative
// distributions of TTFT, TPOT and ITL, and the longest token gap over the run's time.
#pragma once

#include "importers/serving_results/request_results.h"
#include "report/report.h"

namespace sightline {

// Series "ttft_cdf", "tpot_cdf", "itl_cdf" (x: latency, y: % of values at or below it; at most
// ~80 points, denser in the tail) and, where the source has send times, "itl_max_over_time"
// (x: time from the first request, y: the longest gap ending in each of up to 100 buckets).
void AddServingCharts(const RequestResults& results, Section& section);

}  // namespace sightline
