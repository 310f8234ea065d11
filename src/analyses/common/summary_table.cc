#include "analyses/common/summary_table.h"

#include <algorithm>

namespace sightline {

size_t BigTableRowLimit(const AnalyzeOptions& options) {
  return static_cast<size_t>(std::max(options.top_n, 1));
}

std::vector<Column> DurationStatsColumns(const std::string& count_key,
                                         const std::string& count_title) {
  return {
      {"time_pct", "Time", Unit::kPercent},    {"total_ns", "Total", Unit::kDurationNs},
      {count_key, count_title, Unit::kCount},  {"avg_ns", "Avg", Unit::kDurationNs},
      {"median_ns", "Med", Unit::kDurationNs}, {"min_ns", "Min", Unit::kDurationNs},
      {"max_ns", "Max", Unit::kDurationNs},    {"stddev_ns", "StdDev", Unit::kDurationNs},
  };
}

void AppendDurationStats(std::vector<Value>& row, double time_pct, const DurationStats& s) {
  row.emplace_back(time_pct);
  row.emplace_back(s.total);
  row.emplace_back(s.count);
  row.emplace_back(s.mean);
  row.emplace_back(s.median);
  row.emplace_back(s.min);
  row.emplace_back(s.max);
  row.emplace_back(s.stddev);
}

void SetTruncation(Table& table, size_t total, size_t limit) {
  if (total > limit) table.total_rows = static_cast<int64_t>(total);
}

}  // namespace sightline
