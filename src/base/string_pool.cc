#include "base/string_pool.h"

namespace sightline {

StringPool::StringPool() { Intern(""); }

StringId StringPool::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return StringId{it->second};
  const std::string& stored = storage_.emplace_back(s);
  const uint32_t id = static_cast<uint32_t>(views_.size());
  views_.push_back(stored);
  index_.emplace(std::string_view(stored), id);
  return StringId{id};
}

bool StringPool::Find(std::string_view s, StringId* id) const {
  auto it = index_.find(s);
  if (it == index_.end()) return false;
  *id = StringId{it->second};
  return true;
}

}  // namespace sightline
