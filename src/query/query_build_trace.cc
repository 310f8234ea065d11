// QueryDbBuilder::AddTrace: the model's tables and the facts of the analysis (query_build.h).
#include <algorithm>
#include <cmath>

#include "analyses/iteration_log/iteration_log_join.h"
#include "analyses/nvtx_projection/nvtx_projection.h"
#include "facts/graph_kernel_paths.h"
#include "facts/iterations.h"
#include "facts/kernel_category.h"
#include "query/query_build.h"
#include "query/query_insert.h"
#include "query/query_rows.h"
#include "query/query_schema.h"

namespace sightline {
namespace {

const char* PointName(PointKind kind) {
  switch (kind) {
    case PointKind::kLaunch:
      return "launch";
    case PointKind::kCapture:
      return "capture";
    case PointKind::kAligned:
      return "aligned";
  }
  return "launch";
}

std::string Insert(const char* table) { return InsertSql(*FindQueryTable(table)); }
const QueryTableDef& Table(const char* name) { return *FindQueryTable(name); }

Status AddKernels(AnalysisContext& context, int input, QueryRowFeed& feed) {
  const Trace& trace = context.trace();
  const KernelTable& k = trace.kernels;
  const ApiCallTable& api = trace.api_calls;
  const GraphKernelPaths& paths = context.graphs().GraphPaths();
  return feed.Insert(
      Table("kernels"), RowsOf(k.size(), [&](size_t i, QueryRow& row) {
        row.Int(input).Int(static_cast<int64_t>(i)).Text(trace.str(k.name[i]));
        row.Text(trace.str(k.short_name[i]))
            .Text(KernelCategoryName(context.kernels().Category(k.name[i])));
        row.Int(k.start_ns[i]).Int(k.end_ns[i]).Int(k.dur_ns(i)).Int(k.device[i]).Int(k.stream[i]);
        row.Int(k.pid[i]);
        const int32_t call = k.launch_call[i];
        if (call == kNoRow) {
          row.Null().Null().Null();
        } else {
          const auto c = static_cast<size_t>(call);
          row.Int(call).Int(api.tid[c]).Int(api.start_ns[c]);
        }
        row.Int(k.correlation[i]).Int(k.grid[i].x).Int(k.grid[i].y).Int(k.grid[i].z);
        row.Int(k.block[i].x).Int(k.block[i].y).Int(k.block[i].z).Int(k.registers_per_thread[i]);
        row.Int(k.static_smem_bytes[i]).Int(k.dynamic_smem_bytes[i]).Int(k.graph_node[i]);
        row.IntOr(k.capture_ns[i], -1).IntOr(k.capture_tid[i], -1);
        const bool graph = i < paths.graph.size() && paths.graph[i] != 0;
        const int32_t path = i < paths.path.size() ? paths.path[i] : -1;
        if (graph && path >= 0 && static_cast<size_t>(path) < paths.paths.size()) {
          row.Text(paths.paths[static_cast<size_t>(path)]);
        } else {
          row.Null();
        }
        if (graph && i < paths.source.size()) {
          row.Text(PathSourceName(paths.source[i]));
        } else {
          row.Null();
        }
      }));
}

Status AddApiCalls(const Trace& trace, int input, QueryRowFeed& feed) {
  const ApiCallTable& a = trace.api_calls;
  return feed.Insert(
      Table("api_calls"), RowsOf(a.size(), [&](size_t i, QueryRow& row) {
        row.Int(input).Int(static_cast<int64_t>(i)).Text(trace.str(a.name[i]));
        row.Text(a.kind[i] == ApiKind::kRuntime ? "runtime" : "driver");
        row.Text(ApiClassName(a.api_class[i])).Int(a.start_ns[i]).Int(a.end_ns[i]);
        row.Int(a.end_ns[i] - a.start_ns[i]).Int(a.pid[i]).Int(a.tid[i]).Int(a.correlation[i]);
      }));
}

Status AddMemops(const Trace& trace, int input, QueryRowFeed& feed) {
  const MemOpTable& m = trace.memops;
  return feed.Insert(
      Table("memops"), RowsOf(m.size(), [&](size_t i, QueryRow& row) {
        row.Int(input).Int(static_cast<int64_t>(i)).Text(MemOpKindName(m.kind[i]));
        row.Int(m.start_ns[i]).Int(m.end_ns[i]).Int(m.dur_ns(i)).Int(m.device[i]).Int(m.stream[i]);
        row.Int(m.pid[i]).Int(m.size_bytes[i]).Text(MemoryKindName(m.src_kind[i]));
        row.Text(MemoryKindName(m.dst_kind[i])).IntOr(m.launch_call[i], kNoRow);
      }));
}

// The kernels the projected range `row` holds, each once, in kernel order: a kernel with both
// its points inside counts once, at its launch.
void HeldKernels(const LaunchIndex& index, const RangeTable& r, size_t row,
                 std::vector<std::pair<uint32_t, PointKind>>& kernels) {
  kernels.clear();
  const int32_t thread = index.ThreadOf(r.pid[row], r.tid[row]);
  if (thread < 0) return;
  const TimeNs a = r.start_ns[row], b = r.end_ns[row];
  const auto [first, last] = index.EntriesIn(thread, a, b);
  const auto work = index.ThreadWork(thread);
  const auto kinds = index.ThreadPointKinds(thread);
  for (size_t e = first; e < last; ++e) {
    if (!index.IsKernel(work[e]) || !index.PointCounts(work[e], kinds[e], a, b)) continue;
    kernels.emplace_back(work[e], kinds[e]);
  }
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  size_t out = 0;
  for (size_t j = 0; j < kernels.size(); ++j) {
    if (j > 0 && kernels[j].first == kernels[j - 1].first) continue;
    PointKind kind = kernels[j].second;
    if (j + 1 < kernels.size() && kernels[j + 1].first == kernels[j].first)
      kind = PointKind::kLaunch;
    kernels[out++] = {kernels[j].first, kind};
  }
  kernels.resize(out);
}

// Ranges with their projection (the nvtx_projection analysis's own computation), and the kernels
// each projected range holds.
Status AddRanges(AnalysisContext& context, int input, QueryDbBuilder& builder) {
  QueryRowFeed& feed = *builder.feed();
  const Trace& trace = context.trace();
  const RangeTable& r = trace.ranges;
  ASSIGN_OR_RETURN(NvtxProjectionResult proj,
                   ComputeNvtxProjection(context, NvtxProjectionOptions{}));
  std::vector<int32_t> slot(r.size(), -1);  // range row -> index into proj.rows
  for (size_t i = 0; i < proj.rows.size(); ++i)
    slot[static_cast<size_t>(proj.rows[i])] = static_cast<int32_t>(i);
  if (builder.Fills("ranges")) {
    RETURN_IF_ERROR(feed.Insert(
        Table("ranges"), RowsOf(r.size(), [&](size_t i, QueryRow& row) {
          row.Int(input).Int(static_cast<int64_t>(i)).Text(trace.str(r.name[i]));
          row.Text(trace.str(r.domain[i])).Text(RangeKindName(r.kind[i])).Int(r.start_ns[i]);
          row.Int(r.end_ns[i]).Int(r.dur_ns(i)).Int(r.pid[i]).Int(r.tid[i]).Int(r.depth[i]);
          row.IntOr(r.parent[i], kNoRow);
          const int32_t s = slot[i];
          if (s < 0) {
            row.Int(0).Null().Null().Null().Null().Null().Null().Null();
          } else {
            const auto si = static_cast<size_t>(s);
            const LaunchedWork& w = proj.projection.work[si];
            row.Int(1).Int(proj.projection.depth[si]).Int(w.kernel_count).Int(w.kernel_time_ns);
            row.Int(w.memop_count).Int(w.memop_time_ns);
            row.IntOr(w.first_start_ns, INT64_MAX).IntOr(w.last_end_ns, INT64_MIN);
          }
        })));
  }
  if (!builder.Fills("range_kernels")) return Status::Ok();

  const LaunchIndex& index = context.graphs().LaunchesWithCapture();
  std::vector<std::pair<uint32_t, PointKind>> held;  // the current range's kernels
  size_t next_range = 0, j = 0;
  int32_t range = -1;
  return feed.Insert(Table("range_kernels"), [&](QueryRow& row) {
    while (j >= held.size()) {
      if (next_range >= proj.rows.size()) return false;
      range = proj.rows[next_range++];
      HeldKernels(index, r, static_cast<size_t>(range), held);
      j = 0;
    }
    row.Int(input).Int(range).Int(held[j].first).Text(PointName(held[j].second));
    ++j;
    return true;
  });
}

Status AddIterations(AnalysisContext& context, int input, sqlite3* db) {
  StatusOr<const IterationsResult*> result = context.loop().Iterations();
  if (!result.ok()) return result.status();
  const IterationsResult& res = **result;
  const Trace& trace = context.trace();
  QueryInsert ins(db, Insert("iterations"));
  int64_t set_index = 0;
  for (const auto* sets : {&res.sets, &res.other_loops}) {
    for (const IterationSet& set : *sets) {
      for (const Iteration& it : set.iterations) {
        int64_t number = 0;
        ins.Int(input).Int(set_index).Int(it.index);
        if (IterationNumber(trace.str(it.name), &number)) {
          ins.Int(number);
        } else {
          ins.Null();
        }
        ins.Text(trace.str(it.name)).Int(set.pid);
        ins.Int(set.tid).Int(it.start_ns).Int(it.end_ns).Int(it.wall_ns());
        ins.Int(it.launched.kernel_count).Int(it.launched.kernel_time_ns);
        ins.Int(it.launched.memop_count).Int(it.gpu_busy_launched_ns);
        ins.Int(it.gpu_busy_in_window_ns).Int(it.warmup ? 1 : 0).Int(it.outlier ? 1 : 0);
        ins.Text(set.pattern).Text(res.method).Row();
      }
      ++set_index;
    }
  }
  return ins.status();
}

Status AddHostAndDevices(const Trace& trace, int input, sqlite3* db) {
  QueryInsert threads(db, Insert("threads"));
  for (const ThreadInfo& t : trace.threads) {
    threads.Int(input).Int(t.pid).Int(t.tid).Text(t.name).Text(ThreadRoleName(t.role)).Row();
  }
  RETURN_IF_ERROR(threads.status());
  QueryInsert processes(db, Insert("processes"));
  for (const ProcessInfo& p : trace.processes) processes.Int(input).Int(p.pid).Text(p.name).Row();
  RETURN_IF_ERROR(processes.status());
  QueryInsert devices(db, Insert("devices"));
  for (const DeviceInfo& d : trace.devices) {
    devices.Int(input).Int(d.id).Text(d.name).Int(d.sm_count).Int(d.cc_major).Int(d.cc_minor);
    devices.Int(d.total_memory_bytes).Int(d.l2_cache_bytes).Int(d.memory_bandwidth_bytes_per_s);
    devices.Int(d.clock_rate_hz).Row();
  }
  RETURN_IF_ERROR(devices.status());
  return Status::Ok();
}

Status AddGpuMetrics(const Trace& trace, int input, QueryRowFeed& feed) {
  const CounterTable& c = trace.counters;
  return feed.Insert(Table("gpu_metrics"), RowsOf(c.size(), [&](size_t i, QueryRow& row) {
                       row.Int(input)
                           .Int(c.device[i])
                           .Text(trace.str(c.name[i]))
                           .Int(c.time_ns[i])
                           .Real(c.value[i]);
                     }));
}

Status AddMemoryEvents(const Trace& trace, int input, QueryRowFeed& feed) {
  const MemoryEventTable& m = trace.memory_events;
  return feed.Insert(Table("memory_events"), RowsOf(m.size(), [&](size_t i, QueryRow& row) {
                       row.Int(input)
                           .Int(m.time_ns[i])
                           .Int(m.device[i])
                           .Int(m.pid[i])
                           .Int(m.tid[i])
                           .Int(m.bytes[i]);
                       row.Int(static_cast<int64_t>(m.address[i])).Text(MemoryKindName(m.kind[i]));
                       row.Text(trace.str(m.name[i]))
                           .IntOr(m.total_allocated[i], -1)
                           .IntOr(m.total_reserved[i], -1);
                       row.Text(trace.str(m.source[i]));
                     }));
}

}  // namespace

Status QueryDbBuilder::AddRequests(const RequestResults& results) {
  QueryInsert ins(db_, Insert("requests"));
  auto ns = [](double s) { return static_cast<int64_t>(std::llround(s * 1e9)); };
  for (const RequestRecord& r : results.requests) {
    ins.Text(results.path).Text(r.id).Int(r.success ? 1 : 0);
    if (results.has_start_times) {
      ins.Int(ns(r.start_s));
    } else {
      ins.Null();
    }
    ins.Int(ns(r.ttft_s)).Int(ns(r.latency_s)).Int(r.input_tokens).Int(r.output_tokens);
    if (r.queue_s >= 0) {
      ins.Int(ns(r.queue_s));
    } else {
      ins.Null();
    }
    ins.Int(r.preemptions).IntOr(r.first_iteration, -1);
    ins.IntOr(r.chunk_iterations.empty() ? -1 : r.chunk_iterations.front(), -1);
    ins.IntOr(r.last_iteration, -1).Text(r.error).Row();
  }
  return ins.status();
}

Status QueryDbBuilder::AddTrace(AnalysisContext& context, int input) {
  const Trace& trace = context.trace();
  if (Fills("kernels")) RETURN_IF_ERROR(AddKernels(context, input, *feed_));
  if (Fills("api_calls")) RETURN_IF_ERROR(AddApiCalls(trace, input, *feed_));
  if (Fills("memops")) RETURN_IF_ERROR(AddMemops(trace, input, *feed_));
  if (Fills("ranges") || Fills("range_kernels")) RETURN_IF_ERROR(AddRanges(context, input, *this));
  if (Fills("iterations")) RETURN_IF_ERROR(AddIterations(context, input, db_));
  RETURN_IF_ERROR(AddHostAndDevices(trace, input, db_));
  if (Fills("gpu_metrics")) RETURN_IF_ERROR(AddGpuMetrics(trace, input, *feed_));
  if (Fills("memory_events")) RETURN_IF_ERROR(AddMemoryEvents(trace, input, *feed_));
  return Status::Ok();
}

}  // namespace sightline
