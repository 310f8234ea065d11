// Resolves nsys string ids (StringIds.id, used by kernel, API and NVTX names) to interned
// StringIds of the trace. Strings are read lazily, one primary-key lookup per distinct id, and
// cached in a vector indexed by nsys id, so the per-row cost is an array access, not a SQL join.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "importers/nsys/sqlite_db.h"
#include "model/trace_builder.h"

namespace sightline {

class NsysStrings {
 public:
  NsysStrings(SqliteDb& db, TraceBuilder& builder) : db_(db), builder_(builder) {}

  // Prepares the lookup; without a StringIds table every id resolves to the empty string.
  Status Init();

  // The trace's StringId for an nsys string id; the empty string for an id StringIds lacks.
  StringId Id(int64_t nsys_id) {
    if (nsys_id >= 0 && nsys_id < static_cast<int64_t>(dense_.size())) {
      const uint32_t slot = dense_[nsys_id];
      if (slot != 0 && entries_[slot - 1].interned) return entries_[slot - 1].id;
    }
    return IdSlow(nsys_id);
  }
  // The text of an nsys string id; stays valid as long as this object.
  std::string_view View(int64_t nsys_id) {
    if (nsys_id >= 0 && nsys_id < static_cast<int64_t>(dense_.size())) {
      const uint32_t slot = dense_[nsys_id];
      if (slot != 0) return entries_[slot - 1].view;
    }
    return entries_[Load(nsys_id)].view;
  }

  // Distinct ids that StringIds does not hold (they resolved to the empty string).
  int64_t unknown_ids() const { return unknown_ids_; }
  // The first SQLite error met while looking strings up (checked after each table).
  const Status& status() const { return status_; }

 private:
  struct Entry {
    std::string_view view;
    StringId id;
    bool interned = false;
  };

  StringId IdSlow(int64_t nsys_id);
  uint32_t Load(int64_t nsys_id);  // index into entries_

  SqliteDb& db_;
  TraceBuilder& builder_;
  SqliteStatement lookup_;
  bool has_table_ = false;
  Status status_;
  std::vector<uint32_t> dense_;  // nsys id -> entries_ index + 1; 0 = not loaded yet
  std::unordered_map<int64_t, uint32_t> sparse_;  // ids too large for dense_ (or negative)
  std::vector<Entry> entries_;
  std::deque<std::string> storage_;  // deque: views stay valid as it grows
  int64_t unknown_ids_ = 0;
};

}  // namespace sightline
