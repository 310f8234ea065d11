#include "importers/nsys/nsys_strings.h"

#include <algorithm>

#include "importers/nsys/nsys_schema.h"

namespace sightline {
namespace {

// Ids below this use the dense vector (4 bytes per id up to the largest one used: at most 64 MiB).
// nsys numbers strings densely from 0, so larger ids are unusual; they go to a hash map.
constexpr int64_t kDenseLimit = int64_t{1} << 24;

}  // namespace

Status NsysStrings::Init() {
  has_table_ = db_.HasTable(kNsysStringTable);
  // Entry 0: the empty string, for unknown ids.
  entries_.push_back(Entry{std::string_view(), StringId{}, true});
  if (!has_table_) return Status::Ok();
  ASSIGN_OR_RETURN(lookup_, db_.Prepare("SELECT value FROM StringIds WHERE id = ?"));
  return Status::Ok();
}

uint32_t NsysStrings::Load(int64_t nsys_id) {
  const bool dense = nsys_id >= 0 && nsys_id < kDenseLimit;
  if (!dense) {
    auto it = sparse_.find(nsys_id);
    if (it != sparse_.end()) return it->second;
  }
  uint32_t index = 0;  // the empty entry, unless found
  if (has_table_) {
    lookup_.Reset();
    lookup_.BindInt64(1, nsys_id);
    if (lookup_.Step()) {
      storage_.emplace_back(lookup_.Text(0));
      entries_.push_back(Entry{storage_.back(), StringId{}, false});
      index = static_cast<uint32_t>(entries_.size() - 1);
    } else if (!lookup_.status().ok() && status_.ok()) {
      status_ = lookup_.status();
    }
  }
  if (index == 0) ++unknown_ids_;
  if (dense) {
    if (nsys_id >= static_cast<int64_t>(dense_.size())) {
      dense_.resize(std::clamp<size_t>(dense_.size() * 2, nsys_id + 1, kDenseLimit), 0);
    }
    dense_[nsys_id] = index + 1;
  } else {
    sparse_.emplace(nsys_id, index);
  }
  return index;
}

StringId NsysStrings::IdSlow(int64_t nsys_id) {
  uint32_t index;
  if (nsys_id >= 0 && nsys_id < static_cast<int64_t>(dense_.size()) && dense_[nsys_id] != 0) {
    index = dense_[nsys_id] - 1;
  } else {
    index = Load(nsys_id);
  }
  Entry& entry = entries_[index];
  if (!entry.interned) {
    entry.id = builder_.Intern(entry.view);
    entry.interned = true;
  }
  return entry.id;
}

}  // namespace sightline
