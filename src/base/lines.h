// Lines of text, one definition for every line-based reader (JSON lines, CSV, logs): LF or CRLF
// line ends (the CR is dropped), numbered from 1, the last line with or without its LF.
#pragma once

#include <cstdint>
#include <string_view>

namespace sightline {

class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}

  // The next line without its end; false after the last one.
  bool Next(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view l = text_.substr(pos_, end - pos_);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    *line = l;
    return true;
  }
  // The number of the line Next returned last (1 for the first).
  int64_t number() const { return number_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int64_t number_ = 0;
};

// True when the line holds nothing but spaces and tabs.
inline bool IsBlankLine(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace sightline
