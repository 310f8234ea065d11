// UTF-8 for what the program writes: names come from input files and may hold any bytes (control
// characters, terminal escapes, broken sequences); every output must stay well formed and a
// terminal must not act on them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sightline {

// The well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong form, no surrogate, nothing above
// U+10FFFF): its code point and length in bytes; length 0 when the bytes there are not one.
struct Utf8Char {
  char32_t code_point = 0;
  size_t length = 0;
};
Utf8Char DecodeUtf8(std::string_view s, size_t i);

// True for code points a terminal or a reader could be fooled by: C0 controls (newline and tab
// included: they would break a table's line), DEL, C1 controls, and the bidirectional overrides
// and isolates (U+202A..U+202E, U+2066..U+2069) that reorder what is shown.
bool IsControlCodePoint(char32_t c);

// `s` for a terminal or a document: controls written as escapes (\n, \t, \x1b, \u202e), bytes
// that are not UTF-8 as \xNN; everything else unchanged. With `keep_line_breaks`, newlines and
// tabs stay (a message of several lines, XML text).
std::string PrintableText(std::string_view s, bool keep_line_breaks = false);

// The length of the longest prefix of `s` of at most `max_bytes` bytes that does not end inside
// a UTF-8 sequence.
size_t Utf8PrefixLength(std::string_view s, size_t max_bytes);

}  // namespace sightline
