// Small simdjson On-Demand helpers shared by the Kineto readers: zero-copy strings and exact
// integers and times from raw number tokens.
//
// On-Demand's inline code is compiled for the instruction set the compiler targets (the scalar
// "fallback" kernel under default x86-64 flags); stage 1 (structural indexing) still runs through
// simdjson's runtime dispatch (AVX2 / AVX-512), and the reading here works on raw tokens, so this
// costs little.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string_view>

namespace sightline::kineto {

namespace sj = simdjson::ondemand;

// The content of a JSON string value: a view into the buffer when it has no escapes (the common
// case), else unescaped by simdjson into the parser's string buffer. False for non-strings.
bool ReadString(sj::value& value, std::string_view* out);

// The value's raw text (trailing whitespace cut) when it is a scalar; empty for an array, an
// object or a value the parser cannot type (malformed input).
std::string_view ScalarToken(sj::value& v);

// An integer written as a JSON number ("7", "7.0", "7e0") or a numeric string ("7").
bool ReadInt(sj::value& value, int64_t* out);

// A microsecond number token converted exactly to ns (MicrosTokenToNs).
bool ReadTime(sj::value& value, int64_t* ns);

}  // namespace sightline::kineto
