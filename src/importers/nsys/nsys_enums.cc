#include "importers/nsys/nsys_enums.h"

#include <string_view>

#include "importers/nsys/nsys_schema.h"

namespace sightline {
namespace {

// Enum ids beyond this are ignored (the tables hold a few dozen values; this bounds memory).
constexpr int64_t kMaxEnumId = 4096;

struct EventClassSymbol {
  std::string_view symbol;
  int64_t default_id;
  ApiKind kind;
};
constexpr EventClassSymbol kEventClasses[] = {
    {"TRACE_PROCESS_EVENT_CUDA_RUNTIME", 0, ApiKind::kRuntime},
    {"TRACE_PROCESS_EVENT_CUDA_DRIVER", 1, ApiKind::kDriver},
};

struct CopyKindSymbol {
  std::string_view symbol;
  int64_t default_id;
  MemOpKind kind;
};
// Arrays are device memory; unified-memory migrations keep their direction.
constexpr CopyKindSymbol kCopyKinds[] = {
    {"CUDA_MEMCPY_KIND_UNKNOWN", 0, MemOpKind::kOther},
    {"CUDA_MEMCPY_KIND_HTOD", 1, MemOpKind::kHtoD},
    {"CUDA_MEMCPY_KIND_DTOH", 2, MemOpKind::kDtoH},
    {"CUDA_MEMCPY_KIND_HTOA", 3, MemOpKind::kHtoD},
    {"CUDA_MEMCPY_KIND_ATOH", 4, MemOpKind::kDtoH},
    {"CUDA_MEMCPY_KIND_ATOA", 5, MemOpKind::kDtoD},
    {"CUDA_MEMCPY_KIND_ATOD", 6, MemOpKind::kDtoD},
    {"CUDA_MEMCPY_KIND_DTOA", 7, MemOpKind::kDtoD},
    {"CUDA_MEMCPY_KIND_DTOD", 8, MemOpKind::kDtoD},
    {"CUDA_MEMCPY_KIND_HTOH", 9, MemOpKind::kHtoH},
    {"CUDA_MEMCPY_KIND_PTOP", 10, MemOpKind::kPtoP},
    {"CUDA_MEMCPY_KIND_UVM_HTOD", 11, MemOpKind::kHtoD},
    {"CUDA_MEMCPY_KIND_UVM_DTOH", 12, MemOpKind::kDtoH},
    {"CUDA_MEMCPY_KIND_UVM_DTOD", 13, MemOpKind::kDtoD},
};

struct MemKindSymbol {
  std::string_view symbol;
  int64_t default_id;
  MemoryKind kind;
};
constexpr MemKindSymbol kMemKinds[] = {
    {"CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", 0, MemoryKind::kPageable},
    {"CUDA_MEMOPR_MEMORY_KIND_PINNED", 1, MemoryKind::kPinned},
    {"CUDA_MEMOPR_MEMORY_KIND_DEVICE", 2, MemoryKind::kDevice},
    {"CUDA_MEMOPR_MEMORY_KIND_ARRAY", 3, MemoryKind::kArray},
    {"CUDA_MEMOPR_MEMORY_KIND_MANAGED", 4, MemoryKind::kManaged},
    {"CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", 5, MemoryKind::kDevice},
    {"CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", 6, MemoryKind::kManaged},
    {"CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", 7, MemoryKind::kUnknown},
};

template <typename T>
void Set(std::vector<T>& table, int64_t id, T value, T empty) {
  if (id < 0 || id >= kMaxEnumId) return;
  if (id >= static_cast<int64_t>(table.size())) table.resize(id + 1, empty);
  table[id] = value;
}

// Calls on_row(id, symbol) for each row of an ENUM_* table (id, name); nothing when absent.
template <typename F>
Status ForEachEnumRow(SqliteDb& db, const char* table, F on_row) {
  if (!db.HasTable(table)) return Status::Ok();
  static constexpr NsysColumn kColumns[] = {{"id", true}, {"name", true}};
  ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(db, table, kColumns));
  ASSIGN_OR_RETURN(SqliteStatement stmt, db.Prepare(select.sql));
  while (stmt.Step()) on_row(stmt.Int64(0), stmt.Text(1));
  return stmt.status();
}

}  // namespace

NsysEnums::NsysEnums() {
  for (const auto& e : kEventClasses) {
    Set<int8_t>(api_kind_, e.default_id, static_cast<int8_t>(e.kind), -1);
  }
  for (const auto& e : kCopyKinds) Set(copy_kind_, e.default_id, e.kind, MemOpKind::kOther);
  for (const auto& e : kMemKinds) Set(mem_kind_, e.default_id, e.kind, MemoryKind::kUnknown);
}

Status NsysEnums::Load(SqliteDb& db) {
  // The export's own table wins when it names any symbol we know; otherwise keep the defaults.
  std::vector<int8_t> api_kind;
  RETURN_IF_ERROR(ForEachEnumRow(db, "ENUM_NSYS_EVENT_CLASS", [&](int64_t id, std::string_view s) {
    for (const auto& e : kEventClasses) {
      if (s == e.symbol) Set<int8_t>(api_kind, id, static_cast<int8_t>(e.kind), -1);
    }
  }));
  if (!api_kind.empty()) api_kind_.swap(api_kind);

  std::vector<MemOpKind> copy_kind;
  RETURN_IF_ERROR(ForEachEnumRow(db, "ENUM_CUDA_MEMCPY_OPER", [&](int64_t id, std::string_view s) {
    for (const auto& e : kCopyKinds) {
      if (s == e.symbol) Set(copy_kind, id, e.kind, MemOpKind::kOther);
    }
  }));
  if (!copy_kind.empty()) copy_kind_.swap(copy_kind);

  std::vector<MemoryKind> mem_kind;
  RETURN_IF_ERROR(ForEachEnumRow(db, "ENUM_CUDA_MEM_KIND", [&](int64_t id, std::string_view s) {
    for (const auto& e : kMemKinds) {
      if (s == e.symbol) Set(mem_kind, id, e.kind, MemoryKind::kUnknown);
    }
  }));
  if (!mem_kind.empty()) mem_kind_.swap(mem_kind);
  return Status::Ok();
}

}  // namespace sightline
