#include "analyses/memops_summary/memops_summary.h"

#include <algorithm>
#include <string>

#include "analyses/common/analysis_context.h"
#include "analyses/common/group_stats.h"
#include "analyses/common/summary_table.h"
#include "base/saturating.h"

namespace sightline {
namespace {

constexpr uint32_t kNumOpKinds = static_cast<uint32_t>(MemOpKind::kOther) + 1;
constexpr uint32_t kNumMemKinds = static_cast<uint32_t>(MemoryKind::kManaged) + 1;

double Bandwidth(int64_t bytes, DurationNs ns) {
  return ns > 0 ? static_cast<double>(bytes) / static_cast<double>(ns) : 0;
}

uint32_t PathGroup(MemOpKind kind, MemoryKind src, MemoryKind dst) {
  return (static_cast<uint32_t>(kind) * kNumMemKinds + static_cast<uint32_t>(src)) * kNumMemKinds +
         static_cast<uint32_t>(dst);
}

}  // namespace

StatusOr<MemOpsSummaryResult> ComputeMemOpsSummary(AnalysisContext& context,
                                                   const MemOpsSummaryOptions& options) {
  const Trace& trace = context.trace();
  const MemOpTable& m = trace.memops;
  auto included = [&](size_t i) { return options.device < 0 || m.device[i] == options.device; };
  auto kind_group = [&](size_t i) {
    return included(i) ? static_cast<uint32_t>(m.kind[i]) : kNoGroup;
  };
  auto path_group = [&](size_t i) {
    return included(i) ? PathGroup(m.kind[i], m.src_kind[i], m.dst_kind[i]) : kNoGroup;
  };
  auto duration = [&](size_t i) { return m.end_ns[i] - m.start_ns[i]; };
  const std::vector<DurationStats> kind_time =
      ComputeGroupStats(m.size(), kNumOpKinds, kind_group, duration);
  const std::vector<DurationStats> kind_size = ComputeGroupStats(
      m.size(), kNumOpKinds, kind_group, [&](size_t i) { return m.size_bytes[i]; });
  const uint32_t num_paths = kNumOpKinds * kNumMemKinds * kNumMemKinds;
  const std::vector<DurationStats> path_time =
      ComputeGroupStats(m.size(), num_paths, path_group, duration);
  std::vector<int64_t> path_bytes(num_paths, 0);
  for (size_t i = 0; i < m.size(); ++i) {
    if (included(i))
      path_bytes[path_group(i)] = SaturatingAdd(path_bytes[path_group(i)], m.size_bytes[i]);
  }

  MemOpsSummaryResult result;
  for (uint32_t g = 0; g < kNumOpKinds; ++g) {
    if (kind_time[g].count == 0) continue;
    MemOpKindRow& row = result.kinds.emplace_back();
    row.kind = static_cast<MemOpKind>(g);
    row.time = kind_time[g];
    row.size = kind_size[g];
    row.bandwidth_gbps = Bandwidth(row.size.total, row.time.total);
    result.count += row.time.count;
    result.total_ns = SaturatingAdd(result.total_ns, row.time.total);
    result.total_bytes = SaturatingAdd(result.total_bytes, row.size.total);
  }
  for (MemOpKindRow& row : result.kinds) {
    row.time_pct = result.total_ns > 0 ? 100.0 * row.time.total / result.total_ns : 0;
  }
  for (uint32_t g = 0; g < num_paths; ++g) {
    if (path_time[g].count == 0) continue;
    MemOpPathRow& row = result.paths.emplace_back();
    row.kind = static_cast<MemOpKind>(g / (kNumMemKinds * kNumMemKinds));
    row.src_kind = static_cast<MemoryKind>(g / kNumMemKinds % kNumMemKinds);
    row.dst_kind = static_cast<MemoryKind>(g % kNumMemKinds);
    row.time = path_time[g];
    row.total_bytes = path_bytes[g];
    row.bandwidth_gbps = Bandwidth(row.total_bytes, row.time.total);
  }
  std::stable_sort(
      result.kinds.begin(), result.kinds.end(),
      [](const MemOpKindRow& a, const MemOpKindRow& b) { return a.time.total > b.time.total; });
  std::stable_sort(
      result.paths.begin(), result.paths.end(),
      [](const MemOpPathRow& a, const MemOpPathRow& b) { return a.time.total > b.time.total; });
  return result;
}

Status RunMemOpsSummarySection(AnalysisContext& context, int input, Report& report) {
  ASSIGN_OR_RETURN(MemOpsSummaryResult r, ComputeMemOpsSummary(context, MemOpsSummaryOptions{}));
  Section& s = report.AddSection("memops_summary", "GPU memory operations", input);
  s.AddFact("count", "Memory operations", r.count, Unit::kCount);
  s.AddFact("total_bytes", "Bytes moved or set", r.total_bytes, Unit::kBytes);
  s.AddFact("memop_time_ns", "Memory-operation time (sum of durations)", r.total_ns,
            Unit::kDurationNs);
  s.AddFact("bandwidth_gbps", "Average bandwidth (bytes / time)",
            Bandwidth(r.total_bytes, r.total_ns), Unit::kGBps);
  if (r.kinds.empty()) {
    s.notes.push_back("The trace has no GPU memory copies or sets.");
    return Status::Ok();
  }
  std::vector<Column> columns = DurationStatsColumns("count", "Count");
  columns.push_back({"total_bytes", "Bytes", Unit::kBytes});
  columns.push_back({"avg_bytes", "Avg size", Unit::kBytes});
  columns.push_back({"median_bytes", "Med size", Unit::kBytes});
  columns.push_back({"min_bytes", "Min size", Unit::kBytes});
  columns.push_back({"max_bytes", "Max size", Unit::kBytes});
  columns.push_back({"bandwidth_gbps", "Bandwidth", Unit::kGBps});
  columns.push_back({"operation", "Operation", Unit::kText});
  Table& t = s.AddTable(
      "operations", "By operation (nsys cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum)", columns);
  for (const MemOpKindRow& row : r.kinds) {
    std::vector<Value>& values = t.rows.emplace_back();
    AppendDurationStats(values, row.time_pct, row.time);
    values.emplace_back(row.size.total);
    values.emplace_back(row.size.mean);
    values.emplace_back(row.size.median);
    values.emplace_back(row.size.min);
    values.emplace_back(row.size.max);
    values.emplace_back(row.bandwidth_gbps);
    values.emplace_back(std::string(MemOpKindName(row.kind)));
  }
  t.note = "Bandwidth = bytes / time of the operations (GB/s = 10^9 bytes per second).";

  Table& p = s.AddTable("paths", "By source and destination memory",
                        {{"operation", "Operation", Unit::kText},
                         {"src_kind", "Source", Unit::kText},
                         {"dst_kind", "Destination", Unit::kText},
                         {"count", "Count", Unit::kCount},
                         {"total_bytes", "Bytes", Unit::kBytes},
                         {"total_ns", "Total", Unit::kDurationNs},
                         {"avg_ns", "Avg", Unit::kDurationNs},
                         {"min_ns", "Min", Unit::kDurationNs},
                         {"max_ns", "Max", Unit::kDurationNs},
                         {"bandwidth_gbps", "Bandwidth", Unit::kGBps}});
  for (const MemOpPathRow& row : r.paths) {
    p.rows.push_back(
        {std::string(MemOpKindName(row.kind)), std::string(MemoryKindName(row.src_kind)),
         std::string(MemoryKindName(row.dst_kind)), row.time.count, row.total_bytes, row.time.total,
         row.time.mean, row.time.min, row.time.max, row.bandwidth_gbps});
  }
  return Status::Ok();
}

}  // namespace sightline
