// GPU activity of an nsys export: kernels, memory copies and memory sets.
//
// CUPTI_ACTIVITY_KIND_KERNEL: start, end -> start_ns, end_ns; deviceId -> device; streamId ->
// stream; correlationId -> correlation; globalPid -> pid (bits 24..47); demangledName -> name;
// shortName -> short_name (both StringIds ids); grid*/block* -> grid/block; registersPerThread,
// staticSharedMemory, dynamicSharedMemory. Other columns (context, launch type, local memory,
// graph node) are not in the model.
// CUPTI_ACTIVITY_KIND_MEMCPY: copyKind -> kind; srcKind/dstKind -> src_kind/dst_kind; bytes.
// CUPTI_ACTIVITY_KIND_MEMSET: kind memset; memKind -> dst_kind; bytes.
// CUPTI_ACTIVITY_KIND_GRAPH_TRACE (a graph run traced as a whole, nsys's default): one kernel row
// named WholeGraphName(graphId) per run, with start, end, deviceId, streamId, correlationId (the
// cudaGraphLaunch's) and globalPid as for kernels.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "importers/nsys/nsys_tables.h"

namespace sightline {
namespace {

int32_t Pid(int64_t global_pid, NsysSeenIds& seen) {
  if (global_pid < 0) return -1;  // NULL
  seen.AddProcess(global_pid);
  return NsysPidOf(global_pid);
}

}  // namespace

StatusOr<NsysSelect> SelectNsysKernels(SqliteDb& db) {
  static constexpr NsysColumn kColumns[] = {
      {"start", true},
      {"end", true},
      {"deviceId", false, "0"},
      {"streamId", false, "0"},
      {"correlationId", false, "-1"},
      {"globalPid", false, "-1"},
      {"demangledName|shortName|mangledName", true, "-1"},
      {"shortName", false, "-1"},  // -1: the builder derives it from the full name
      {"gridX", false, "0"},
      {"gridY", false, "0"},
      {"gridZ", false, "0"},
      {"blockX", false, "0"},
      {"blockY", false, "0"},
      {"blockZ", false, "0"},
      {"registersPerThread", false, "-1"},
      {"staticSharedMemory", false, "-1"},
      {"dynamicSharedMemory", false, "-1"},
      {"graphNodeId", false, "0"},  // with --cuda-graph-trace=node
  };
  return BuildNsysSelect(db, kNsysKernelTable, kColumns);
}

StatusOr<std::shared_ptr<const GraphNodeIndex>> ReadNsysGraphNodes(SqliteDb& db) {
  auto nodes = std::make_shared<GraphNodeIndex>();
  if (!db.HasTable("CUDA_GRAPH_NODE_EVENTS")) return std::shared_ptr<const GraphNodeIndex>(nodes);
  ASSIGN_OR_RETURN(std::vector<std::string> columns, db.Columns("CUDA_GRAPH_NODE_EVENTS"));
  auto has = [&](std::string_view c) {
    return std::find(columns.begin(), columns.end(), c) != columns.end();
  };
  if (!has("start") || !has("graphNodeId")) return std::shared_ptr<const GraphNodeIndex>(nodes);
  ASSIGN_OR_RETURN(
      SqliteStatement stmt,
      db.Prepare(fmt::format("SELECT graphNodeId, start, {}, {} FROM CUDA_GRAPH_NODE_EVENTS",
                             has("globalTid") ? "globalTid" : "NULL",
                             has("originalGraphNodeId") ? "originalGraphNodeId" : "NULL")));
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(1)) continue;
    // nsys records an instantiated node twice: created (no original), then cloned (with the
    // original); GraphNodeIndex keeps the first row's time and the later row's link.
    const int64_t global_tid = stmt.IsNull(2) ? -1 : stmt.Int64(2);
    nodes->Add(stmt.Int64(0), stmt.Int64(1), global_tid < 0 ? -1 : NsysPidOf(global_tid),
               global_tid < 0 ? -1 : NsysTidOf(global_tid), stmt.IsNull(3) ? 0 : stmt.Int64(3));
  }
  RETURN_IF_ERROR(stmt.status());
  return std::shared_ptr<const GraphNodeIndex>(nodes);
}

Status ReadNsysGraphCreations(SqliteDb& db, Trace& trace) {
  if (!db.HasTable("CUDA_GRAPH_EVENTS")) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<std::string> columns, db.Columns("CUDA_GRAPH_EVENTS"));
  for (const char* c : {"start", "globalTid", "nameId", "graphId"}) {
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) return Status::Ok();
  }
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db.Prepare("SELECT e.graphId, e.start, e.globalTid FROM CUDA_GRAPH_EVENTS e "
                              "JOIN StringIds s ON s.id = e.nameId "
                              "WHERE s.value = 'Graph Creation' AND e.graphId IS NOT NULL "
                              "AND e.start IS NOT NULL AND e.globalTid IS NOT NULL"));
  while (stmt.Step()) {
    const int64_t global_tid = stmt.Int64(2);
    trace.graph_creations.push_back(
        {stmt.Int64(0), stmt.Int64(1), NsysPidOf(global_tid), NsysTidOf(global_tid)});
  }
  RETURN_IF_ERROR(stmt.status());
  std::stable_sort(
      trace.graph_creations.begin(), trace.graph_creations.end(),
      [](const GraphCreation& a, const GraphCreation& b) { return a.time_ns < b.time_ns; });
  return Status::Ok();
}

void AddNsysKernelRows(NsysContext& ctx, const NsysChunk& chunk) {
  KernelRow row;
  for (size_t i = 0; i < chunk.rows; ++i) {
    const int64_t* v = chunk.row(i);
    if (!FitsInt32(v, {2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16})) {
      ++ctx.counts.out_of_range_rows[kNsysKernelTable];
      continue;
    }
    row.start_ns = v[0];
    row.end_ns = v[1];
    row.device = static_cast<int32_t>(v[2]);
    row.stream = static_cast<int32_t>(v[3]);
    row.correlation = v[4];
    row.pid = Pid(v[5], ctx.seen);
    row.name = ctx.strings.Id(v[6]);
    row.short_name = v[7] < 0 ? StringId{} : ctx.strings.Id(v[7]);
    row.grid =
        Dim3{static_cast<int32_t>(v[8]), static_cast<int32_t>(v[9]), static_cast<int32_t>(v[10])};
    row.block =
        Dim3{static_cast<int32_t>(v[11]), static_cast<int32_t>(v[12]), static_cast<int32_t>(v[13])};
    row.registers_per_thread = static_cast<int32_t>(v[14]);
    row.static_smem_bytes = static_cast<int32_t>(v[15]);
    row.dynamic_smem_bytes = static_cast<int32_t>(v[16]);
    row.graph_node = v[17];
    // Where the node was captured (model/graph_nodes.h); kernels outside graphs keep -1.
    if (ctx.graph_nodes) {
      if (!ctx.graph_nodes->FillCapture(row)) ++ctx.counts.graph_kernels_without_capture;
    } else {
      row.capture_node = 0;
      row.capture_ns = -1;
      row.capture_pid = row.capture_tid = -1;
    }
    ctx.builder.AddKernel(row);
  }
}

StatusOr<NsysSelect> SelectNsysMemcpys(SqliteDb& db) {
  static constexpr NsysColumn kColumns[] = {
      {"start", true},
      {"end", true},
      {"deviceId", false, "0"},
      {"streamId", false, "0"},
      {"correlationId", false, "-1"},
      {"globalPid", false, "-1"},
      {"bytes", false, "0"},
      {"copyKind", false, "-1"},
      {"srcKind", false, "-1"},
      {"dstKind", false, "-1"},
  };
  return BuildNsysSelect(db, kNsysMemcpyTable, kColumns);
}

void AddNsysMemcpyRows(NsysContext& ctx, const NsysChunk& chunk) {
  MemOpRow row;
  for (size_t i = 0; i < chunk.rows; ++i) {
    const int64_t* v = chunk.row(i);
    if (!FitsInt32(v, {2, 3})) {
      ++ctx.counts.out_of_range_rows[kNsysMemcpyTable];
      continue;
    }
    row.start_ns = v[0];
    row.end_ns = v[1];
    row.device = static_cast<int32_t>(v[2]);
    row.stream = static_cast<int32_t>(v[3]);
    row.correlation = v[4];
    row.pid = Pid(v[5], ctx.seen);
    row.size_bytes = v[6];
    row.kind = ctx.enums.CopyKindOf(v[7]);
    row.src_kind = ctx.enums.MemoryKindOf(v[8]);
    row.dst_kind = ctx.enums.MemoryKindOf(v[9]);
    ctx.builder.AddMemOp(row);
  }
}

StatusOr<NsysSelect> SelectNsysMemsets(SqliteDb& db) {
  static constexpr NsysColumn kColumns[] = {
      {"start", true},
      {"end", true},
      {"deviceId", false, "0"},
      {"streamId", false, "0"},
      {"correlationId", false, "-1"},
      {"globalPid", false, "-1"},
      {"bytes", false, "0"},
      {"memKind", false, "-1"},
  };
  return BuildNsysSelect(db, kNsysMemsetTable, kColumns);
}

void AddNsysMemsetRows(NsysContext& ctx, const NsysChunk& chunk) {
  MemOpRow row;
  row.kind = MemOpKind::kMemset;
  for (size_t i = 0; i < chunk.rows; ++i) {
    const int64_t* v = chunk.row(i);
    if (!FitsInt32(v, {2, 3})) {
      ++ctx.counts.out_of_range_rows[kNsysMemsetTable];
      continue;
    }
    row.start_ns = v[0];
    row.end_ns = v[1];
    row.device = static_cast<int32_t>(v[2]);
    row.stream = static_cast<int32_t>(v[3]);
    row.correlation = v[4];
    row.pid = Pid(v[5], ctx.seen);
    row.size_bytes = v[6];
    row.dst_kind = ctx.enums.MemoryKindOf(v[7]);
    ctx.builder.AddMemOp(row);
  }
}

Status ImportNsysGraphTraces(NsysContext& ctx) {
  if (!ctx.db.HasTable(kNsysGraphTraceTable)) return Status::Ok();
  static constexpr NsysColumn kColumns[] = {
      {"start", true},
      {"end", true},
      {"deviceId", false, "0"},
      {"streamId", false, "0"},
      {"correlationId", false, "-1"},
      {"globalPid", false, "-1"},
      {"graphId", false, "0"},
  };
  ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, kNsysGraphTraceTable, kColumns));
  ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql));
  int64_t runs = 0;
  KernelRow row;
  while (stmt.Step()) {
    if (!stmt.AllIntegers(static_cast<int>(std::size(kColumns)))) {
      ++ctx.counts.wrong_type_rows[kNsysGraphTraceTable];
      continue;
    }
    if (!stmt.FitsInt32(2) || !stmt.FitsInt32(3)) {
      ++ctx.counts.out_of_range_rows[kNsysGraphTraceTable];
      continue;
    }
    row.start_ns = stmt.Int64(0);
    row.end_ns = stmt.Int64(1);
    row.device = stmt.Int32(2);
    row.stream = stmt.Int32(3);
    row.correlation = stmt.Int64(4);
    row.pid = Pid(stmt.Int64(5), ctx.seen);
    row.name = row.short_name = ctx.builder.Intern(WholeGraphName(stmt.Int64(6)));
    ctx.builder.AddKernel(row);
    ++runs;
  }
  RETURN_IF_ERROR(stmt.status());
  NoteWholeGraphRuns(ctx.builder.diagnostics(), runs);
  return Status::Ok();
}

}  // namespace sightline
