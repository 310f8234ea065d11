// Processes and threads of an nsys export.
//
// PROCESSES: globalPid -> pid (bits 24..47; the pid column when globalPid is absent), name.
// ThreadNames: globalTid -> pid, tid; nameId -> name (StringIds).
// A system-wide capture lists every process and thread of the machine; only those that own an
// imported event are kept. Processes and threads that own events but have no row here are added
// without a name.
#include <algorithm>

#include "importers/nsys/nsys_tables.h"

namespace sightline {

std::vector<std::pair<int32_t, int32_t>> NsysSeenIds::Threads() const {
  std::vector<std::pair<int32_t, int32_t>> out;
  out.reserve(threads_.size());
  for (int64_t key : threads_) {
    out.emplace_back(static_cast<int32_t>(key >> 32), static_cast<int32_t>(key & 0xFFFFFFFF));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status ReadNsysProcessesAndThreads(NsysContext& ctx) {
  if (ctx.db.HasTable(kNsysProcessTable)) {
    static constexpr NsysColumn kColumns[] = {{"globalPid"}, {"pid"}, {"name"}};
    ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, kNsysProcessTable, kColumns));
    ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql));
    while (stmt.Step()) {
      int32_t pid = -1;
      if (!stmt.IsNull(0)) {
        pid = NsysPidOf(stmt.Int64(0));
      } else if (!stmt.IsNull(1) && stmt.FitsInt32(1)) {
        pid = stmt.Int32(1);
      }
      if (pid < 0 || !ctx.seen.HasProcess(pid)) continue;
      ctx.builder.AddProcess(ProcessInfo{pid, std::string(stmt.Text(2))});
    }
    RETURN_IF_ERROR(stmt.status());
  }
  if (ctx.db.HasTable(kNsysThreadNameTable)) {
    static constexpr NsysColumn kColumns[] = {{"globalTid", true}, {"nameId", true}};
    ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, kNsysThreadNameTable, kColumns));
    ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql));
    while (stmt.Step()) {
      const int64_t global_tid = stmt.Int64(0);
      const int32_t pid = NsysPidOf(global_tid), tid = NsysTidOf(global_tid);
      if (!ctx.seen.HasThread(pid, tid)) continue;
      ctx.builder.AddThread(ThreadInfo{pid, tid, std::string(ctx.strings.View(stmt.Int64(1)))});
    }
    RETURN_IF_ERROR(stmt.status());
  }
  // Owners of events that the tables above did not name (AddProcess/AddThread keep a known name).
  for (int32_t pid : ctx.seen.pids()) ctx.builder.AddProcess(ProcessInfo{pid, ""});
  for (const auto& [pid, tid] : ctx.seen.Threads()) ctx.builder.AddThread(ThreadInfo{pid, tid, ""});
  return ctx.strings.status();
}

}  // namespace sightline
