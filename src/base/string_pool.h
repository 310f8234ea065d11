// StringPool: interns strings once so that tables store 4-byte ids (kernel names repeat millions
// of times). Ids are dense and stable; id 0 is the empty string.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sightline {

struct StringId {
  uint32_t value = 0;
  friend bool operator==(StringId a, StringId b) { return a.value == b.value; }
  friend bool operator!=(StringId a, StringId b) { return a.value != b.value; }
  friend bool operator<(StringId a, StringId b) { return a.value < b.value; }
};

class StringPool {
 public:
  StringPool();
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  StringId Intern(std::string_view s);
  std::string_view Get(StringId id) const { return views_[id.value]; }
  // The id of s if interned, else nullopt-like: returns false.
  bool Find(std::string_view s, StringId* id) const;
  size_t size() const { return views_.size(); }

 private:
  // The strings interned last, by a cheap fingerprint (length, first and last 8 bytes): a name
  // that repeats (most do, millions of times) is found by one comparison instead of hashing it
  // whole and probing the index. A slot holds the pool's own copy, so a match is exact.
  struct Recent {
    std::string_view s;  // empty with id 0 (the empty string) until used
    uint32_t id = 0;
  };
  static constexpr size_t kRecentSlots = 256;
  static size_t RecentSlot(std::string_view s);

  std::deque<std::string> storage_;  // deque: element addresses stay valid as it grows
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, uint32_t> index_;
  std::array<Recent, kRecentSlots> recent_{};
};

}  // namespace sightline

template <>
struct std::hash<sightline::StringId> {
  size_t operator()(sightline::StringId id) const noexcept { return id.value; }
};
