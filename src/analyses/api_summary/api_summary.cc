#include "analyses/api_summary/api_summary.h"

#include <algorithm>

#include "analyses/common/analysis_context.h"
#include "analyses/common/group_stats.h"
#include "analyses/common/summary_table.h"
#include "base/saturating.h"

namespace sightline {

StatusOr<ApiSummaryResult> ComputeApiSummary(AnalysisContext& context,
                                             const ApiSummaryOptions& options) {
  const Trace& trace = context.trace();
  const ApiCallTable& a = trace.api_calls;
  auto included = [&](size_t i) {
    return a.kind[i] == ApiKind::kRuntime ? options.runtime : options.driver;
  };
  // Dense group ids by name id; API names are few, calls are many.
  std::vector<uint32_t> group_of(trace.strings.size(), kNoGroup);
  std::vector<uint32_t> first_row;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!included(i)) continue;
    uint32_t& g = group_of[a.name[i].value];
    if (g == kNoGroup) {
      g = static_cast<uint32_t>(first_row.size());
      first_row.push_back(static_cast<uint32_t>(i));
    }
  }
  const uint32_t num_groups = static_cast<uint32_t>(first_row.size());
  std::vector<DurationStats> stats = ComputeGroupStats(
      a.size(), num_groups,
      [&](size_t i) { return included(i) ? group_of[a.name[i].value] : kNoGroup; },
      [&](size_t i) { return a.end_ns[i] - a.start_ns[i]; });

  ApiSummaryResult result;
  result.rows.resize(num_groups);
  for (uint32_t g = 0; g < num_groups; ++g) {
    ApiSummaryRow& row = result.rows[g];
    const uint32_t i = first_row[g];
    row.name = a.name[i];
    row.kind = a.kind[i];
    row.api_class = a.api_class[i];
    row.stats = stats[g];
    result.calls += row.stats.count;
    result.total_ns = SaturatingAdd(result.total_ns, row.stats.total);
    if (row.kind == ApiKind::kRuntime) {
      result.runtime_calls += row.stats.count;
      result.runtime_ns = SaturatingAdd(result.runtime_ns, row.stats.total);
    } else {
      result.driver_calls += row.stats.count;
      result.driver_ns = SaturatingAdd(result.driver_ns, row.stats.total);
    }
  }
  for (ApiSummaryRow& row : result.rows) {
    row.time_pct = result.total_ns > 0 ? 100.0 * row.stats.total / result.total_ns : 0;
  }
  std::sort(result.rows.begin(), result.rows.end(),
            [&](const ApiSummaryRow& x, const ApiSummaryRow& y) {
              if (x.stats.total != y.stats.total) return x.stats.total > y.stats.total;
              if (x.stats.count != y.stats.count) return x.stats.count < y.stats.count;
              return trace.str(x.name) < trace.str(y.name);
            });
  return result;
}

Status RunApiSummarySection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  const AnalyzeOptions& options = context.options();
  ASSIGN_OR_RETURN(ApiSummaryResult r, ComputeApiSummary(context, ApiSummaryOptions{}));
  Section& s = report.AddSection("api_summary", "CUDA API calls", input);
  s.AddFact("api_time_ns", "API time (sum of call durations)", r.total_ns, Unit::kDurationNs);
  s.AddFact("calls", "API calls", r.calls, Unit::kCount);
  s.AddFact("runtime_calls", "Runtime API calls", r.runtime_calls, Unit::kCount);
  s.AddFact("runtime_time_ns", "Runtime API time", r.runtime_ns, Unit::kDurationNs);
  s.AddFact("driver_calls", "Driver API calls", r.driver_calls, Unit::kCount);
  s.AddFact("driver_time_ns", "Driver API time", r.driver_ns, Unit::kDurationNs);
  if (r.rows.empty()) {
    s.notes.push_back("The trace has no CUDA runtime or driver API calls.");
    return Status::Ok();
  }
  std::vector<Column> columns = DurationStatsColumns("calls", "Calls");
  columns.push_back({"kind", "Kind", Unit::kText});
  columns.push_back({"class", "Class", Unit::kText});
  columns.push_back({"name", "Name", Unit::kText});
  Table& t = s.AddTable("apis", "API calls by total time (nsys cuda_api_sum)", columns);
  const size_t limit = std::min(r.rows.size(), BigTableRowLimit(options));
  for (size_t i = 0; i < limit; ++i) {
    const ApiSummaryRow& row = r.rows[i];
    std::vector<Value>& values = t.rows.emplace_back();
    AppendDurationStats(values, row.time_pct, row.stats);
    values.emplace_back(std::string(row.kind == ApiKind::kRuntime ? "runtime" : "driver"));
    values.emplace_back(std::string(ApiClassName(row.api_class)));
    values.emplace_back(std::string(trace.str(row.name)));
  }
  SetTruncation(t, r.rows.size(), limit);
  t.note = "Time is the share of the summed API time of runtime and driver calls together.";
  return Status::Ok();
}

}  // namespace sightline
