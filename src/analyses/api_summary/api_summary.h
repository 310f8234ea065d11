// CUDA API summary: host time per runtime/driver API name, like `nsys stats --report
// cuda_api_sum` (which summarizes every row of CUPTI_ACTIVITY_KIND_RUNTIME: runtime and driver
// calls together). Input: one Trace. Units: ns. docs/analyses/api_summary.md.
#pragma once

#include <vector>

#include "analyses/common/analysis.h"
#include "base/stats.h"
#include "base/status.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

struct ApiSummaryOptions {
  bool runtime = true;  // include CUDA runtime calls (cuda*)
  bool driver = true;   // include CUDA driver calls (cu*)
};

struct ApiSummaryRow {
  StringId name;  // without nsys's version suffix ("cudaLaunchKernel", not "..._v7000")
  ApiKind kind = ApiKind::kRuntime;
  ApiClass api_class = ApiClass::kOther;
  DurationStats stats;  // over call durations, ns
  double time_pct = 0;  // stats.total / ApiSummaryResult::total_ns * 100
};

struct ApiSummaryResult {
  int64_t calls = 0;
  DurationNs total_ns = 0;  // sum of call durations (calls on different threads overlap)
  int64_t runtime_calls = 0, driver_calls = 0;
  DurationNs runtime_ns = 0, driver_ns = 0;
  // Total time descending, then calls ascending, then name.
  std::vector<ApiSummaryRow> rows;
};

StatusOr<ApiSummaryResult> ComputeApiSummary(AnalysisContext& context,
                                             const ApiSummaryOptions& options);

// Section "api_summary": facts and the per-API table.
Status RunApiSummarySection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
