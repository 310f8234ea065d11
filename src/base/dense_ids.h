// Dense slots for ids read from input (device ids, stream ids: any int32), so that per-id tables
// are sized by how many distinct ids a trace has, never by an id's value (a device id near
// INT32_MAX must not ask for a table of 2^31 entries). Used by the per-device facts
// (facts/gpu_time_facts.h, facts/kernel_facts.h).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace sightline {

class DenseIds {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  DenseIds() { direct_.fill(kNone); }

  // The slot of `id`, a new one (the next integer) when `id` was not added before.
  uint32_t Add(int32_t id) {
    uint32_t* slot = nullptr;
    if (id >= 0 && id < kDirect) {
      slot = &direct_[static_cast<size_t>(id)];
    } else {
      slot = &others_.try_emplace(id, kNone).first->second;
    }
    if (*slot == kNone) {
      *slot = static_cast<uint32_t>(ids_.size());
      ids_.push_back(id);
    }
    return *slot;
  }

  // The slot of `id`; kNone when it was never added.
  uint32_t Find(int32_t id) const {
    if (id >= 0 && id < kDirect) return direct_[static_cast<size_t>(id)];
    auto it = others_.find(id);
    return it == others_.end() ? kNone : it->second;
  }

  size_t size() const { return ids_.size(); }
  // The id of each slot, in the order they were added.
  const std::vector<int32_t>& ids() const { return ids_; }

 private:
  // The usual small ids (device 0..7) take a fixed table: as fast as indexing by the id itself.
  static constexpr int32_t kDirect = 256;
  std::array<uint32_t, kDirect> direct_;
  std::unordered_map<int32_t, uint32_t> others_;
  std::vector<int32_t> ids_;
};

}  // namespace sightline
