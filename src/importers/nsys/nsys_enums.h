// The nsys enum values the importer maps: ENUM_NSYS_EVENT_CLASS (which rows of
// CUPTI_ACTIVITY_KIND_RUNTIME are runtime or driver calls), ENUM_CUDA_MEMCPY_OPER (copy direction)
// and ENUM_CUDA_MEM_KIND (memory kind). Values are looked up by symbol name in the export's own
// ENUM_* tables, falling back to the values of schema 3.16-3.20 when a table is absent.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/status.h"
#include "importers/nsys/sqlite_db.h"
#include "model/trace.h"

namespace sightline {

class NsysEnums {
 public:
  // Defaults: the values checked in exports of schema 3.16.1 and 3.20.3.
  NsysEnums();
  // Replaces the defaults with what the export's ENUM_* tables say, for the symbols it names.
  Status Load(SqliteDb& db);

  // Runtime or driver for an eventClass; nullopt for other classes (e.g. CUDA backtraces).
  std::optional<ApiKind> ApiKindOf(int64_t event_class) const {
    if (event_class < 0 || event_class >= static_cast<int64_t>(api_kind_.size())) return {};
    const int8_t v = api_kind_[event_class];
    if (v < 0) return {};
    return static_cast<ApiKind>(v);
  }
  MemOpKind CopyKindOf(int64_t copy_kind) const {
    if (copy_kind < 0 || copy_kind >= static_cast<int64_t>(copy_kind_.size())) {
      return MemOpKind::kOther;
    }
    return copy_kind_[copy_kind];
  }
  MemoryKind MemoryKindOf(int64_t mem_kind) const {
    if (mem_kind < 0 || mem_kind >= static_cast<int64_t>(mem_kind_.size())) {
      return MemoryKind::kUnknown;
    }
    return mem_kind_[mem_kind];
  }

 private:
  std::vector<int8_t> api_kind_;  // by eventClass; -1 = not an API call
  std::vector<MemOpKind> copy_kind_;
  std::vector<MemoryKind> mem_kind_;
};

}  // namespace sightline
