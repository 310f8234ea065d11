#include "base/string_pool.h"

#include <cstring>

namespace sightline {

StringPool::StringPool() {
  // Id 0 is the empty string (what the recent slots start with), added here since Intern("")
  // would find it in those slots before it exists.
  views_.push_back(storage_.emplace_back());
  index_.emplace(views_.back(), 0);
}

size_t StringPool::RecentSlot(std::string_view s) {
  uint64_t head = 0, tail = 0;
  if (s.size() >= 8) {
    std::memcpy(&head, s.data(), 8);
    std::memcpy(&tail, s.data() + s.size() - 8, 8);
  } else {
    for (char c : s) head = head << 8 | static_cast<unsigned char>(c);
  }
  const uint64_t h = (head ^ (tail * 0x9e3779b97f4a7c15ull) ^ s.size()) * 0xff51afd7ed558ccdull;
  return static_cast<size_t>(h >> 56) % kRecentSlots;
}

StringId StringPool::Intern(std::string_view s) {
  Recent& recent = recent_[RecentSlot(s)];
  if (recent.s == s) return StringId{recent.id};
  auto it = index_.find(s);
  if (it != index_.end()) {
    recent = {views_[it->second], it->second};
    return StringId{it->second};
  }
  const std::string& stored = storage_.emplace_back(s);
  const uint32_t id = static_cast<uint32_t>(views_.size());
  views_.push_back(stored);
  index_.emplace(std::string_view(stored), id);
  recent = {views_[id], id};
  return StringId{id};
}

bool StringPool::Find(std::string_view s, StringId* id) const {
  auto it = index_.find(s);
  if (it == index_.end()) return false;
  *id = StringId{it->second};
  return true;
}

}  // namespace sightline
