// GPU metrics of an nsys export (--gpu-metrics-devices): GPU_METRICS(timestamp, typeId, metricId,
// value) joined to TARGET_INFO_GPU_METRICS(typeId, metricId, metricName) on both columns; the GPU
// is typeId & 0xFF. Metrics are matched by name (ids differ between metric sets). Values are stored
// raw: each is multiplied by its sub-metric's multiplier from the GpuMetricsConfig row of
// TARGET_INFO_SYSTEM_ENV (nsys_gpu_metrics_config.h: clocks stored in Hz -> MHz, the warps
// sub-metrics x 0.5), from the metric set that has every metric of the export (the GPU's chip,
// TARGET_INFO_GPU.chipName, decides between several). Without that row: the "[Throughput %]"
// metrics as stored and the clock frequencies from Hz to MHz, the other metrics not read
// (gpu_metrics_not_read); metrics the chosen set does not list, and the "[Avg]" warps sub-metrics
// (sums over the sample's cycles; "[Avg Warps per Cycle]" is read), are not read either. Exports
// before schema 3.15 keep the samples as JSON in GENERIC_EVENTS: not read (no such export to check
// on); such rows are counted (nsys_gpu_metrics_generic_events) when the export has no GPU_METRICS.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "importers/nsys/nsys_gpu_metrics_config.h"
#include "importers/nsys/nsys_tables.h"

namespace sightline {
namespace {

// The GPU's chip name ("GH100") of the first GPU with one; "" when unknown.
std::string ChipName(SqliteDb& db) {
  if (!db.HasTable("TARGET_INFO_GPU")) return "";
  StatusOr<std::vector<std::string>> columns = db.Columns("TARGET_INFO_GPU");
  if (!columns.ok() || std::find(columns->begin(), columns->end(), "chipName") == columns->end()) {
    return "";
  }
  StatusOr<SqliteStatement> stmt =
      db.Prepare("SELECT chipName FROM TARGET_INFO_GPU WHERE chipName IS NOT NULL LIMIT 1");
  if (!stmt.ok() || !stmt->Step()) return "";
  return std::string(stmt->Text(0));
}

// The metric sets of the export's GpuMetricsConfig; empty when it has none.
std::vector<GpuMetricSet> ConfigSets(SqliteDb& db) {
  if (!db.HasTable("TARGET_INFO_SYSTEM_ENV")) return {};
  StatusOr<SqliteStatement> stmt =
      db.Prepare("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'GpuMetricsConfig'");
  if (!stmt.ok() || !stmt->Step() || stmt->IsNull(0)) return {};
  return ParseGpuMetricsConfig(stmt->Text(0));
}

}  // namespace

Status ReadNsysGpuMetrics(NsysContext& ctx) {
  if (!ctx.db.HasTable("GPU_METRICS") && ctx.db.HasTable("GENERIC_EVENTS")) {
    // An older export's GPU metrics (JSON in GENERIC_EVENTS): said, not silently missing.
    ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare("SELECT count(*) FROM GENERIC_EVENTS"));
    if (stmt.Step() && stmt.Int64(0) > 0) {
      ctx.builder.diagnostics().Add(DiagCode::kNsysGpuMetricsGenericEvents, stmt.Int64(0));
    }
    RETURN_IF_ERROR(stmt.status());
  }
  if (!ctx.db.HasTable("GPU_METRICS") || !ctx.db.HasTable("TARGET_INFO_GPU_METRICS")) {
    return Status::Ok();
  }
  struct Row {
    int64_t type, id;
    std::string name;
  };
  std::vector<Row> rows;
  {
    ASSIGN_OR_RETURN(
        SqliteStatement stmt,
        ctx.db.Prepare("SELECT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS "
                       "ORDER BY typeId, metricId"));  // rows come in no guaranteed order
    while (stmt.Step()) {
      if (stmt.IsNull(0) || stmt.IsNull(1) || stmt.IsNull(2)) continue;
      rows.push_back({stmt.Int64(0), stmt.Int64(1), std::string(stmt.Text(2))});
    }
    RETURN_IF_ERROR(stmt.status());
  }
  std::vector<std::string> names;
  for (const Row& r : rows) names.push_back(r.name);
  const std::vector<GpuMetricSet> sets = ConfigSets(ctx.db);
  const GpuMetricSet* set = PickGpuMetricSet(sets, names, ChipName(ctx.db));
  if (!sets.empty() && set == nullptr) {
    ctx.builder.diagnostics().Add(DiagCode::kNsysGpuMetricsConfigUnmatched, 1);
  }

  // (typeId, metricId) -> (name, scale); scale 0: not read.
  struct Metric {
    StringId name;
    double scale = 0;
  };
  std::unordered_map<std::string, Metric> metrics;
  auto key = [](int64_t type, int64_t id) {
    return std::to_string(type) + ":" + std::to_string(id);
  };
  for (const Row& r : rows) {
    Metric m;
    if (set != nullptr) {
      auto it = set->scales.find(r.name);
      // "[Avg]" values grow with the sampling period (checked on a 2025.3 export: 2e6 times
      // "[Avg Warps per Cycle]" at 1 kHz on a 1.98 GHz clock): not read; the per-cycle one is.
      if (it != set->scales.end() && !r.name.ends_with(" [Avg]")) m.scale = it->second;
    } else if (r.name.find("[Throughput %]") != std::string::npos) {
      m.scale = 1;
    } else if (r.name.find("Clock Frequency [MHz]") != std::string::npos) {
      m.scale = 1e-6;  // stored in Hz
    }
    if (m.scale != 0) m.name = ctx.builder.Intern(r.name);
    metrics[key(r.type, r.id)] = m;
  }
  int64_t skipped = 0;
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   ctx.db.Prepare("SELECT timestamp, typeId, metricId, value FROM GPU_METRICS"));
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(1) || stmt.IsNull(2) || stmt.IsNull(3)) {
      ++skipped;
      continue;
    }
    const int64_t type = stmt.Int64(1);
    auto m = metrics.find(key(type, stmt.Int64(2)));
    if (m == metrics.end() || m->second.scale == 0) {
      ++skipped;
      continue;
    }
    ctx.builder.AddCounter(stmt.Int64(0), static_cast<int32_t>(type & 0xFF), m->second.name,
                           static_cast<double>(stmt.Int64(3)) * m->second.scale);
  }
  RETURN_IF_ERROR(stmt.status());
  if (skipped > 0) ctx.builder.diagnostics().Add(DiagCode::kGpuMetricsNotRead, skipped);
  return Status::Ok();
}

}  // namespace sightline
