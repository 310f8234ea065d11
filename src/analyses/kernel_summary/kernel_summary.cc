#include "analyses/kernel_summary/kernel_summary.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "analyses/common/analysis_context.h"
#include "analyses/common/group_stats.h"
#include "analyses/common/summary_table.h"
#include "base/saturating.h"

namespace sightline {

StatusOr<KernelSummaryResult> ComputeKernelSummary(AnalysisContext& context,
                                                   const KernelSummaryOptions& options) {
  const Trace& trace = context.trace();
  const KernelTable& k = trace.kernels;
  const bool by_short = options.group_by == KernelSummaryOptions::GroupBy::kShortName;
  const std::vector<StringId>& key = by_short ? k.short_name : k.name;

  // Dense group ids by string id: one vector lookup per kernel, no hashing of names.
  std::vector<uint32_t> group_of(trace.strings.size(), kNoGroup);
  std::vector<uint32_t> first_row;  // per group: a row that has this name
  for (size_t i = 0; i < k.size(); ++i) {
    if (options.device >= 0 && k.device[i] != options.device) continue;
    uint32_t& g = group_of[key[i].value];
    if (g == kNoGroup) {
      g = static_cast<uint32_t>(first_row.size());
      first_row.push_back(static_cast<uint32_t>(i));
    }
  }
  const uint32_t num_groups = static_cast<uint32_t>(first_row.size());
  std::vector<DurationStats> stats = ComputeGroupStats(
      k.size(), num_groups,
      [&](size_t i) {
        return options.device >= 0 && k.device[i] != options.device ? kNoGroup
                                                                    : group_of[key[i].value];
      },
      [&](size_t i) { return k.end_ns[i] - k.start_ns[i]; });

  KernelSummaryResult result;
  result.rows.resize(num_groups);
  for (uint32_t g = 0; g < num_groups; ++g) {
    KernelSummaryRow& row = result.rows[g];
    const uint32_t i = first_row[g];
    row.name = key[i];
    row.short_name = k.short_name[i];
    row.category = context.kernels().Category(k.name[i]);
    row.stats = stats[g];
    result.instances += row.stats.count;
    result.total_ns = SaturatingAdd(result.total_ns, row.stats.total);
  }
  // Shares of the int64 totals, unless a total held at the end of int64 (a trace built in memory;
  // the importer refuses one whose sums do not fit): then of the exact sums (mean x count), so
  // that no share passes 100% (saturated totals gave 91% + 46%).
  long double exact_total = 0;
  bool saturated = result.total_ns == std::numeric_limits<int64_t>::max();
  for (const KernelSummaryRow& row : result.rows) {
    exact_total += static_cast<long double>(row.stats.mean) * row.stats.count;
    saturated |= row.stats.total == std::numeric_limits<int64_t>::max();
  }
  auto share = [&](int64_t total, long double exact) {
    if (saturated) return exact_total > 0 ? static_cast<double>(100.0L * exact / exact_total) : 0.0;
    return result.total_ns > 0 ? 100.0 * total / result.total_ns : 0.0;
  };
  std::array<KernelCategoryRow, kNumKernelCategories> cats{};
  std::array<long double, kNumKernelCategories> cat_exact{};
  for (KernelSummaryRow& row : result.rows) {
    const long double exact = static_cast<long double>(row.stats.mean) * row.stats.count;
    row.time_pct = share(row.stats.total, exact);
    cat_exact[static_cast<size_t>(row.category)] += exact;
    KernelCategoryRow& c = cats[static_cast<size_t>(row.category)];
    c.category = row.category;
    c.instances += row.stats.count;
    c.distinct_kernels += 1;
    c.total_ns = SaturatingAdd(c.total_ns, row.stats.total);
  }
  std::sort(result.rows.begin(), result.rows.end(),
            [&](const KernelSummaryRow& a, const KernelSummaryRow& b) {
              if (a.stats.total != b.stats.total) return a.stats.total > b.stats.total;
              if (a.stats.count != b.stats.count) return a.stats.count < b.stats.count;
              return trace.str(a.name) < trace.str(b.name);
            });
  for (KernelCategoryRow& c : cats) {
    if (c.instances == 0) continue;
    c.time_pct = share(c.total_ns, cat_exact[static_cast<size_t>(c.category)]);
    result.categories.push_back(c);
  }
  std::stable_sort(result.categories.begin(), result.categories.end(),
                   [](const KernelCategoryRow& a, const KernelCategoryRow& b) {
                     return a.total_ns > b.total_ns;
                   });
  return result;
}

Status RunKernelSummarySection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  const AnalyzeOptions& options = context.options();
  ASSIGN_OR_RETURN(KernelSummaryResult r, ComputeKernelSummary(context, KernelSummaryOptions{}));
  Section& s = report.AddSection("kernel_summary", "GPU kernels", input);
  s.AddFact("kernel_time_ns", "Kernel time (sum of durations)", r.total_ns, Unit::kDurationNs);
  s.AddFact("instances", "Kernel executions", r.instances, Unit::kCount);
  s.AddFact("distinct_kernels", "Distinct kernels", static_cast<int64_t>(r.rows.size()),
            Unit::kCount);
  if (r.rows.empty()) {
    s.notes.push_back("The trace has no GPU kernels.");
    return Status::Ok();
  }

  std::vector<Column> columns = DurationStatsColumns("instances", "Instances");
  columns.push_back({"category", "Category", Unit::kText});
  columns.push_back({"name", "Name", Unit::kText});
  columns.push_back({"full_name", "Full name", Unit::kText, /*optional=*/true});
  Table& t = s.AddTable("kernels", "Kernels by total time (nsys cuda_gpu_kern_sum)", columns);
  const size_t limit = std::min(r.rows.size(), BigTableRowLimit(options));
  for (size_t i = 0; i < limit; ++i) {
    const KernelSummaryRow& row = r.rows[i];
    std::vector<Value>& values = t.rows.emplace_back();
    AppendDurationStats(values, row.time_pct, row.stats);
    values.emplace_back(std::string(KernelCategoryName(row.category)));
    values.emplace_back(std::string(trace.str(row.short_name)));
    values.emplace_back(std::string(trace.str(row.name)));
  }
  SetTruncation(t, r.rows.size(), limit);
  t.note = "Time is the share of the summed kernel time; grouped by full demangled name.";

  Table& c = s.AddTable("categories", "Kernel time by category",
                        {{"category", "Category", Unit::kText},
                         {"time_pct", "Time", Unit::kPercent},
                         {"total_ns", "Total", Unit::kDurationNs},
                         {"instances", "Instances", Unit::kCount},
                         {"kernels", "Kernels", Unit::kCount}});
  for (const KernelCategoryRow& row : r.categories) {
    c.rows.push_back({std::string(KernelCategoryName(row.category)), row.time_pct, row.total_ns,
                      row.instances, row.distinct_kernels});
  }
  c.note = "Categories come from kernel names (docs/analyses/kernel_categories.md).";
  std::vector<std::pair<std::string, double>> by_category;
  for (const KernelCategoryRow& row : r.categories) {
    by_category.emplace_back(KernelCategoryName(row.category), static_cast<double>(row.total_ns));
  }
  if (auto bars = SumsLargestFirst(by_category); !bars.empty()) {
    s.AddBarChart("time_by_category", "Kernel time by category", Unit::kDurationNs, bars);
  }
  return Status::Ok();
}

}  // namespace sightline
