#include "base/utf8.h"

#include <fmt/format.h>

#include <iterator>

namespace sightline {

Utf8Char DecodeUtf8(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  if (i >= s.size()) return {};
  const unsigned char c = byte(i);
  if (c < 0x80) return {c, 1};
  size_t len = 0;
  char32_t cp = 0, min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return {};  // a continuation byte, C0/C1 (always overlong) or F5..FF
  }
  if (i + len > s.size()) return {};
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, len};
}

bool IsControlCodePoint(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

std::string PrintableText(std::string_view s, bool keep_line_breaks) {
  const auto kept = [&](const Utf8Char& u) {
    return u.length > 0 && (!IsControlCodePoint(u.code_point) ||
                            (keep_line_breaks && (u.code_point == '\n' || u.code_point == '\t')));
  };
  size_t i = 0;
  while (i < s.size()) {  // the common case: nothing to change
    const Utf8Char u = DecodeUtf8(s, i);
    if (!kept(u)) break;
    i += u.length;
  }
  std::string out(s.substr(0, i));
  while (i < s.size()) {
    const Utf8Char u = DecodeUtf8(s, i);
    if (u.length == 0) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (kept(u)) {
      out.append(s.substr(i, u.length));
    } else if (u.code_point == '\n') {
      out += "\\n";
    } else if (u.code_point == '\t') {
      out += "\\t";
    } else if (u.code_point == '\r') {
      out += "\\r";
    } else if (u.code_point < 0x80) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned>(u.code_point));
    } else {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(u.code_point));
    }
    i += u.length;
  }
  return out;
}

size_t Utf8PrefixLength(std::string_view s, size_t max_bytes) {
  if (max_bytes >= s.size()) return s.size();
  size_t keep = max_bytes;
  // Not inside a UTF-8 sequence: back up over continuation bytes (10xxxxxx).
  while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
  return keep;
}

}  // namespace sightline
