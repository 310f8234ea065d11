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

Status AddKernels(AnalysisContext& context, int input, sqlite3* db) {
  const Trace& trace = context.trace();
  const KernelTable& k = trace.kernels;
  const ApiCallTable& api = trace.api_calls;
  const GraphKernelPaths& paths = context.GraphPaths();
  QueryInsert ins(db, Insert("kernels"));
  for (size_t i = 0; i < k.size(); ++i) {
    ins.Int(input).Int(static_cast<int64_t>(i)).Text(trace.str(k.name[i]));
    ins.Text(trace.str(k.short_name[i])).Text(KernelCategoryName(context.Category(k.name[i])));
    ins.Int(k.start_ns[i]).Int(k.end_ns[i]).Int(k.dur_ns(i)).Int(k.device[i]).Int(k.stream[i]);
    ins.Int(k.pid[i]);
    const int32_t call = k.launch_call[i];
    if (call == kNoRow) {
      ins.Null().Null().Null();
    } else {
      const auto c = static_cast<size_t>(call);
      ins.Int(call).Int(api.tid[c]).Int(api.start_ns[c]);
    }
    ins.Int(k.correlation[i]).Int(k.grid[i].x).Int(k.grid[i].y).Int(k.grid[i].z);
    ins.Int(k.block[i].x).Int(k.block[i].y).Int(k.block[i].z).Int(k.registers_per_thread[i]);
    ins.Int(k.static_smem_bytes[i]).Int(k.dynamic_smem_bytes[i]).Int(k.graph_node[i]);
    ins.IntOr(k.capture_ns[i], -1).IntOr(k.capture_tid[i], -1);
    const bool graph = i < paths.graph.size() && paths.graph[i] != 0;
    const int32_t path = i < paths.path.size() ? paths.path[i] : -1;
    if (graph && path >= 0 && static_cast<size_t>(path) < paths.paths.size()) {
      ins.Text(paths.paths[static_cast<size_t>(path)]);
    } else {
      ins.Null();
    }
    if (graph && i < paths.source.size()) {
      ins.Text(PathSourceName(paths.source[i]));
    } else {
      ins.Null();
    }
    ins.Row();
  }
  return ins.status();
}

Status AddApiCallsAndMemops(const Trace& trace, int input, sqlite3* db) {
  const ApiCallTable& a = trace.api_calls;
  QueryInsert calls(db, Insert("api_calls"));
  for (size_t i = 0; i < a.size(); ++i) {
    calls.Int(input).Int(static_cast<int64_t>(i)).Text(trace.str(a.name[i]));
    calls.Text(a.kind[i] == ApiKind::kRuntime ? "runtime" : "driver");
    calls.Text(ApiClassName(a.api_class[i])).Int(a.start_ns[i]).Int(a.end_ns[i]);
    calls.Int(a.end_ns[i] - a.start_ns[i]).Int(a.pid[i]).Int(a.tid[i]).Int(a.correlation[i]);
    calls.Row();
  }
  RETURN_IF_ERROR(calls.status());
  const MemOpTable& m = trace.memops;
  QueryInsert ops(db, Insert("memops"));
  for (size_t i = 0; i < m.size(); ++i) {
    ops.Int(input).Int(static_cast<int64_t>(i)).Text(MemOpKindName(m.kind[i]));
    ops.Int(m.start_ns[i]).Int(m.end_ns[i]).Int(m.dur_ns(i)).Int(m.device[i]).Int(m.stream[i]);
    ops.Int(m.pid[i]).Int(m.size_bytes[i]).Text(MemoryKindName(m.src_kind[i]));
    ops.Text(MemoryKindName(m.dst_kind[i])).IntOr(m.launch_call[i], kNoRow).Row();
  }
  return ops.status();
}

// Ranges with their projection (the nvtx_projection analysis's own computation), and the kernels
// each projected range holds.
Status AddRanges(AnalysisContext& context, int input, sqlite3* db) {
  const Trace& trace = context.trace();
  const RangeTable& r = trace.ranges;
  ASSIGN_OR_RETURN(NvtxProjectionResult proj,
                   ComputeNvtxProjection(context, NvtxProjectionOptions{}));
  std::vector<int32_t> slot(r.size(), -1);  // range row -> index into proj.rows
  for (size_t i = 0; i < proj.rows.size(); ++i)
    slot[static_cast<size_t>(proj.rows[i])] = static_cast<int32_t>(i);
  QueryInsert ins(db, Insert("ranges"));
  for (size_t i = 0; i < r.size(); ++i) {
    ins.Int(input).Int(static_cast<int64_t>(i)).Text(trace.str(r.name[i]));
    ins.Text(trace.str(r.domain[i])).Text(RangeKindName(r.kind[i])).Int(r.start_ns[i]);
    ins.Int(r.end_ns[i]).Int(r.dur_ns(i)).Int(r.pid[i]).Int(r.tid[i]).Int(r.depth[i]);
    ins.IntOr(r.parent[i], kNoRow);
    const int32_t s = slot[i];
    if (s < 0) {
      ins.Int(0).Null().Null().Null().Null().Null().Null().Null();
    } else {
      const auto si = static_cast<size_t>(s);
      const LaunchedWork& w = proj.projection.work[si];
      ins.Int(1).Int(proj.projection.depth[si]).Int(w.kernel_count).Int(w.kernel_time_ns);
      ins.Int(w.memop_count).Int(w.memop_time_ns);
      ins.IntOr(w.first_start_ns, INT64_MAX).IntOr(w.last_end_ns, INT64_MIN);
    }
    ins.Row();
  }
  RETURN_IF_ERROR(ins.status());

  const LaunchIndex& index = context.LaunchesWithCapture();
  QueryInsert held(db, Insert("range_kernels"));
  std::vector<std::pair<uint32_t, PointKind>> kernels;
  for (const int32_t row : proj.rows) {
    const auto ri = static_cast<size_t>(row);
    const int32_t thread = index.ThreadOf(r.pid[ri], r.tid[ri]);
    if (thread < 0) continue;
    const TimeNs a = r.start_ns[ri], b = r.end_ns[ri];
    const auto [first, last] = index.EntriesIn(thread, a, b);
    const auto work = index.ThreadWork(thread);
    const auto kinds = index.ThreadPointKinds(thread);
    kernels.clear();
    for (size_t e = first; e < last; ++e) {
      if (!index.IsKernel(work[e]) || !index.PointCounts(work[e], kinds[e], a, b)) continue;
      kernels.emplace_back(work[e], kinds[e]);
    }
    // A kernel with both its points inside counts once, at its launch.
    std::stable_sort(kernels.begin(), kernels.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t j = 0; j < kernels.size(); ++j) {
      if (j > 0 && kernels[j].first == kernels[j - 1].first) continue;
      PointKind kind = kernels[j].second;
      if (j + 1 < kernels.size() && kernels[j + 1].first == kernels[j].first)
        kind = PointKind::kLaunch;
      held.Int(input).Int(row).Int(kernels[j].first).Text(PointName(kind)).Row();
    }
  }
  return held.status();
}

Status AddIterations(AnalysisContext& context, int input, sqlite3* db) {
  StatusOr<const IterationsResult*> result = context.Iterations();
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
  const CounterTable& c = trace.counters;
  QueryInsert metrics(db, Insert("gpu_metrics"));
  for (size_t i = 0; i < c.size(); ++i) {
    metrics.Int(input).Int(c.device[i]).Text(trace.str(c.name[i])).Int(c.time_ns[i]);
    metrics.Real(c.value[i]).Row();
  }
  RETURN_IF_ERROR(metrics.status());
  const MemoryEventTable& m = trace.memory_events;
  QueryInsert mem(db, Insert("memory_events"));
  for (size_t i = 0; i < m.size(); ++i) {
    mem.Int(input).Int(m.time_ns[i]).Int(m.device[i]).Int(m.pid[i]).Int(m.tid[i]).Int(m.bytes[i]);
    mem.Int(static_cast<int64_t>(m.address[i])).Text(MemoryKindName(m.kind[i]));
    mem.Text(trace.str(m.name[i])).IntOr(m.total_allocated[i], -1).IntOr(m.total_reserved[i], -1);
    mem.Text(trace.str(m.source[i])).Row();
  }
  return mem.status();
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
  RETURN_IF_ERROR(AddKernels(context, input, db_));
  RETURN_IF_ERROR(AddApiCallsAndMemops(context.trace(), input, db_));
  RETURN_IF_ERROR(AddRanges(context, input, db_));
  RETURN_IF_ERROR(AddIterations(context, input, db_));
  return AddHostAndDevices(context.trace(), input, db_);
}

}  // namespace sightline
