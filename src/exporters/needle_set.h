// A set of strings searched for at once, ASCII case-insensitively: what `sightline redact` learned
// of a file's identity (exporters/redactor.h), looked for in every string of the copy. One pass
// over the text whatever the number of needles: a bitmap of the needles' first three bytes says
// where one may start, so the common string (a kernel name) costs one lookup per byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sightline {

class NeedleSet {
 public:
  // Needles shorter than this are not searched (a two-letter name would match everywhere).
  static constexpr size_t kMinLength = 3;
  // Needles shorter than this match only as a whole word (no letter or digit on either side), so
  // that a three-letter user name does not rewrite every word that contains it.
  static constexpr size_t kMinSubstringLength = 4;

  // Adds `text` (ignored when shorter than kMinLength) and returns its index, or -1 when ignored.
  // Adding the same text (in any case) again returns the first index.
  int Add(std::string_view text);
  size_t size() const { return needles_.size(); }
  const std::string& needle(int index) const { return needles_[static_cast<size_t>(index)]; }

  struct Match {
    size_t pos = 0;
    size_t length = 0;
    int needle = -1;
  };
  // The leftmost match at or after `from`, the longest there; needles shorter than `min_length`
  // are skipped.
  std::optional<Match> FindNext(std::string_view text, size_t from, size_t min_length = 0) const;

 private:
  static uint32_t Gram(const char* p);  // three bytes, lower-cased

  std::vector<std::string> needles_;  // lower case
  // Needle indexes by first three bytes, longest first.
  std::unordered_map<uint32_t, std::vector<int>> by_gram_;
  std::vector<uint64_t> bitmap_;  // 2^24 bits, one per three-byte prefix; empty until a needle
};

// ASCII lower case (names, hosts and values are matched without regard to case; UTF-8 bytes
// above 0x7f are compared as they are).
inline char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
inline bool IsAlnumAscii(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
std::string LowerAscii(std::string_view s);
bool EqualsIgnoringCase(std::string_view a, std::string_view b);

}  // namespace sightline
