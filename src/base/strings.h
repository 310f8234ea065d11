// Small ASCII string helpers that files of every stage share (one definition each, so that the
// unity build's batches can hold any files together).
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <string_view>
#include <utility>

namespace sightline {

inline bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

// A copy with A-Z lowered (other bytes as they are).
inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// JSON's whitespace (RFC 8259: space, tab, line feed, carriage return).
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Appends fmt's formatting of the arguments to `out`.
template <typename... Args>
void Emit(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

}  // namespace sightline
