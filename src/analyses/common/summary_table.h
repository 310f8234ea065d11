// Shared pieces of the summary sections (kernel_summary, api_summary, memops_summary): how many
// rows a big table keeps, and the nsys-stats-shaped statistics columns.
#pragma once

#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/stats.h"
#include "report/report.h"

namespace sightline {

// Rows kept in a big table: top_n (--top). Table::total_rows says how many there were.
size_t BigTableRowLimit(const AnalyzeOptions& options);

// Columns "Time (%)", "Total", <count>, "Avg", "Med", "Min", "Max", "StdDev" as nsys stats shows
// them; keys time_pct, total_ns, <count_key>, avg_ns, median_ns, min_ns, max_ns, stddev_ns.
std::vector<Column> DurationStatsColumns(const std::string& count_key,
                                         const std::string& count_title);

// The values for DurationStatsColumns: time_pct then the statistics.
void AppendDurationStats(std::vector<Value>& row, double time_pct, const DurationStats& s);

// Marks a table truncated to `limit` rows out of `total`.
void SetTruncation(Table& table, size_t total, size_t limit);

}  // namespace sightline
