// GPU memory allocations of an nsys export (--cuda-memory-usage=true):
// CUDA_GPU_MEMORY_USAGE_EVENTS(start, globalPid, deviceId, address, bytes, memKind,
// memoryOperationType, name, correlationId). memoryOperationType 0 (allocation) -> +bytes,
// 1 (deallocation) -> -bytes (ENUM_CUDA_DEV_MEM_EVENT_OPER); memKind as for copies; name: the
// symbol of a static allocation. Rows with NULLs in the required columns or another operation type
// are dropped and counted (nsys_memory_event_unusable).
#include "importers/nsys/nsys_tables.h"

namespace sightline {

Status ReadNsysMemoryPools(NsysContext& ctx);

Status ReadNsysMemoryUsage(NsysContext& ctx) {
  static const std::string kTable = "CUDA_GPU_MEMORY_USAGE_EVENTS";
  if (!ctx.db.HasTable(kTable)) return Status::Ok();
  static constexpr NsysColumn kColumns[] = {{"start", true},
                                            {"globalPid"},
                                            {"deviceId", true},
                                            {"address"},
                                            {"bytes", true},
                                            {"memKind"},
                                            {"memoryOperationType", true},
                                            {"name"},
                                            {"correlationId"},
                                            {"localMemoryPoolAddress"},
                                            {"localMemoryPoolSize"},
                                            {"importedMemoryPoolAddress"}};
  ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, kTable, kColumns));
  ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql));
  int64_t unusable = 0;
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(2) || stmt.IsNull(4) || stmt.IsNull(6)) {
      ++unusable;
      continue;
    }
    const int64_t op = stmt.Int64(6);
    const int64_t bytes = stmt.Int64(4);
    if ((op != 0 && op != 1) || bytes < 0 || !stmt.FitsInt32(2)) {
      ++unusable;
      continue;
    }
    TraceBuilder::MemoryEventRow row;
    row.time_ns = stmt.Int64(0);
    row.pid = stmt.IsNull(1) ? -1 : NsysPidOf(stmt.Int64(1));
    row.device = stmt.Int32(2);
    row.address = stmt.IsNull(3) ? 0 : static_cast<uint64_t>(stmt.Int64(3));
    row.bytes = op == 0 ? bytes : -bytes;
    row.kind = stmt.IsNull(5) ? MemoryKind::kUnknown : ctx.enums.MemoryKindOf(stmt.Int64(5));
    if (!stmt.IsNull(7) && !stmt.Text(7).empty()) row.name = ctx.builder.Intern(stmt.Text(7));
    row.correlation = stmt.Int64Or(8, -1);
    // Stream-ordered pools: nsys stores 0 (or NULL) where the memory came from no pool.
    if (const int64_t local = stmt.Int64Or(9, 0); local != 0) {
      row.pool = static_cast<uint64_t>(local);
      if (const int64_t size = stmt.Int64Or(10, -1); size >= 0) row.pool_size = size;
    } else if (const int64_t imported = stmt.Int64Or(11, 0); imported != 0) {
      row.pool = static_cast<uint64_t>(imported);
    }
    ctx.builder.AddMemoryEvent(row);
  }
  RETURN_IF_ERROR(stmt.status());
  if (unusable > 0) ctx.builder.diagnostics().Add(DiagCode::kNsysMemoryEventUnusable, unusable);
  return ReadNsysMemoryPools(ctx);
}

// Stream-ordered pools created, trimmed or destroyed (CUDA_GPU_MEMORY_POOL_EVENTS(start,
// globalPid, deviceId, address, operationType, poolType, correlationId, size, ...);
// ENUM_CUDA_MEMPOOL_OPER: 1 created, 2 destroyed, 3 trimmed): rows that change only a pool's
// size. Rows with NULLs in the required columns or another operation are counted
// (nsys_memory_event_unusable).
Status ReadNsysMemoryPools(NsysContext& ctx) {
  static const std::string kTable = "CUDA_GPU_MEMORY_POOL_EVENTS";
  if (!ctx.db.HasTable(kTable)) return Status::Ok();
  static constexpr NsysColumn kColumns[] = {
      {"start", true},
      {"globalPid"},
      {"deviceId", true},
      {"address", true},
      {"operationType|memoryPoolOperationType|memPoolOperationType"},
      {"poolType|memoryPoolType|memPoolType"},
      {"correlationId"},
      {"size|localMemoryPoolSize|poolSize"}};
  ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, kTable, kColumns));
  ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql));
  int64_t unusable = 0;
  while (stmt.Step()) {
    if (stmt.IsNull(0) || stmt.IsNull(2) || stmt.IsNull(3) || stmt.IsNull(4)) {
      ++unusable;
      continue;
    }
    const int64_t op = stmt.Int64(4);
    if (op < 1 || op > 3 || !stmt.FitsInt32(2)) {
      ++unusable;
      continue;
    }
    TraceBuilder::MemoryEventRow row;  // a pool's new size only: no allocation
    row.time_ns = stmt.Int64(0);
    row.pid = stmt.IsNull(1) ? -1 : NsysPidOf(stmt.Int64(1));
    row.device = stmt.Int32(2);
    row.kind = MemoryKind::kDevice;
    row.pool = static_cast<uint64_t>(stmt.Int64(3));
    row.correlation = stmt.Int64Or(6, -1);
    const bool local = stmt.Int64Or(5, 1) == 1;
    // Created: a new pool holds no memory yet (nsys reports 32 MiB at creation on the H200, but the
    // first 64 MiB allocation brings it to 64 MiB, not 96). Destroyed: none left.
    if (op != 3) {
      row.pool_size = 0;
    } else if (const int64_t size = stmt.Int64Or(7, -1); local && size >= 0) {
      row.pool_size = size;
    }
    ctx.builder.AddMemoryEvent(row);
  }
  RETURN_IF_ERROR(stmt.status());
  if (unusable > 0) {
    ctx.builder.diagnostics().Add(DiagCode::kNsysMemoryEventUnusable, unusable,
                                  "CUDA_GPU_MEMORY_POOL_EVENTS");
  }
  return Status::Ok();
}

}  // namespace sightline
