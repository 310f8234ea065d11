// GPU metrics of an nsys export (--gpu-metrics-devices): GPU_METRICS(timestamp, typeId, metricId,
// value) joined to TARGET_INFO_GPU_METRICS(typeId, metricId, metricName) on both columns; the GPU
// is typeId & 0xFF. Metrics are matched by name (ids differ between metric sets). Read: the
// "[Throughput %]" metrics (stored as percent) and the clock frequencies (stored in Hz; kept in
// MHz, as the name says); other metrics are counted as gpu_metrics_not_read. Exports before
// schema 3.15 keep the samples as JSON in GENERIC_EVENTS: not read.
#include <string>
#include <unordered_map>

#include "importers/nsys/nsys_tables.h"

namespace sightline {

Status ReadNsysGpuMetrics(NsysContext& ctx) {
  if (!ctx.db.HasTable("GPU_METRICS") || !ctx.db.HasTable("TARGET_INFO_GPU_METRICS")) {
    return Status::Ok();
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
  {
    ASSIGN_OR_RETURN(
        SqliteStatement stmt,
        ctx.db.Prepare("SELECT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS"));
    while (stmt.Step()) {
      const std::string_view name = stmt.Text(2);
      Metric m;
      if (name.find("[Throughput %]") != std::string_view::npos) {
        m.scale = 1;
      } else if (name.find("Clock Frequency [MHz]") != std::string_view::npos) {
        m.scale = 1e-6;  // stored in Hz
      }
      if (m.scale != 0) m.name = ctx.builder.Intern(name);
      metrics[key(stmt.Int64(0), stmt.Int64(1))] = m;
    }
    RETURN_IF_ERROR(stmt.status());
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
