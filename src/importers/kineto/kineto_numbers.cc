#include "importers/kineto/kineto_numbers.h"

#include <cstring>
#include <limits>

#include "base/strings.h"

namespace sightline::kineto {
namespace {

using u128 = unsigned __int128;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Eight ASCII digits at p as a number (SWAR: all eight at once), or false if one is not a digit.
bool EightDigits(const char* p, uint64_t* value) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  // Each byte is 0x30..0x39: high nibble 3, and adding 6 does not carry into the high nibble.
  if (((x & 0xF0F0F0F0F0F0F0F0ull) |
       (((x + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) != 0x3333333333333333ull) {
    return false;
  }
  x -= 0x3030303030303030ull;  // eight digits d0..d7 (d0 lowest byte)
  x = x * 10 + (x >> 8);       // pairs: 10*d0 + d1 in every other byte
  x = (((x & 0x000000FF000000FFull) * 0x000F424000000064ull) +            // 1000000, 100
       (((x >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >>  // 10000, 1
      32;
  *value = x;
  return true;
}

// 10^n for n in [0, 38].
u128 Pow10(int n) {
  u128 p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

}  // namespace

bool MicrosTokenToNs(std::string_view t, int64_t* ns) {
  // Fast path for what Kineto writes: up to 16 integer digits (older traces write epoch
  // microseconds as integers: 16 digits), then at most 3 fraction digits; at most 19 digits, so
  // v < 10^19 fits in 64 bits unsigned, and a result above INT64_MAX takes the general path.
  {
    size_t i = 0;
    uint64_t v = 0;
    for (uint64_t eight; i + 8 <= t.size() && i + 8 <= 16 && EightDigits(t.data() + i, &eight);
         i += 8) {
      v = v * 100000000 + eight;
    }
    while (i < t.size() && i < 16 && IsDigit(t[i]))
      v = v * 10 + static_cast<unsigned>(t[i++] - '0');
    if (i > 0 && (i == t.size() || !IsDigit(t[i]))) {
      int frac = 0;
      if (i < t.size() && t[i] == '.') {
        ++i;
        while (frac < 3 && i < t.size() && IsDigit(t[i])) {
          v = v * 10 + static_cast<unsigned>(t[i++] - '0');
          ++frac;
        }
      }
      if (frac > 0 || i == 0 || t[i - 1] != '.') {
        while (i < t.size() && IsJsonSpace(t[i])) ++i;
        if (i == t.size()) {
          for (; frac < 3; ++frac) v *= 10;
          if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            *ns = static_cast<int64_t>(v);
            return true;
          }
        }
      }
    }
  }
  // General path: signs, more digits, exponents, rounding.
  size_t i = 0;
  const size_t n = t.size();
  bool negative = false;
  if (i < n && t[i] == '-') {
    negative = true;
    ++i;
  }
  // Significant digits go into `mantissa` (38 digits fit in 128 bits).
  u128 mantissa = 0;
  int digits = 0;
  int exp10 = 0;  // value = mantissa * 10^exp10 microseconds
  bool dropped_integer_digits = false;
  auto take = [&](char c, bool fraction) {
    if (digits < 38) {
      if (digits > 0 || c != '0') {
        mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
        ++digits;
      }
      if (fraction) --exp10;
    } else {
      // Beyond 38 digits: integer digits scale the value, fraction digits are below 1 ns.
      if (!fraction) {
        ++exp10;
        dropped_integer_digits = true;
      }
    }
  };
  const size_t int_start = i;
  while (i < n && IsDigit(t[i])) take(t[i++], false);
  if (i == int_start) return false;
  if (i < n && t[i] == '.') {
    ++i;
    const size_t frac_start = i;
    while (i < n && IsDigit(t[i])) take(t[i++], true);
    if (i == frac_start) return false;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (t[i] == '+' || t[i] == '-')) exp_negative = t[i++] == '-';
    const size_t exp_start = i;
    int e = 0;
    while (i < n && IsDigit(t[i])) {
      if (e < 100000) e = e * 10 + (t[i] - '0');
      ++i;
    }
    if (i == exp_start) return false;
    exp10 += exp_negative ? -e : e;
  }
  while (i < n && IsJsonSpace(t[i])) ++i;
  if (i != n) return false;

  const int scale = exp10 + 3;  // ns = mantissa * 10^scale
  u128 value;
  if (mantissa == 0) {
    value = 0;
  } else if (scale >= 0) {
    if (dropped_integer_digits || digits + scale > 19) return false;  // >= 10^19 ns
    value = mantissa * Pow10(scale);
  } else {
    if (scale < -38) {
      value = 0;
    } else {
      const u128 div = Pow10(-scale);
      value = mantissa / div;
      // Half away from zero (the magnitude rounds up on a tie).
      if (mantissa % div * 2 >= div) ++value;
    }
  }
  const u128 limit = negative ? u128{1} << 63 : (u128{1} << 63) - 1;
  if (value > limit) return false;
  *ns =
      negative ? static_cast<int64_t>(-static_cast<__int128>(value)) : static_cast<int64_t>(value);
  return true;
}

bool ParseInt64(std::string_view t, int64_t* value) {
  size_t i = 0;
  bool negative = false;
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) negative = t[i++] == '-';
  if (i == t.size()) return false;
  uint64_t v = 0;
  if (t.size() - i <= 18) {  // at most 18 digits: no overflow possible
    for (; i < t.size(); ++i) {
      const unsigned digit = static_cast<unsigned char>(t[i]) - static_cast<unsigned>('0');
      if (digit > 9) return false;
      v = v * 10 + digit;
    }
    *value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  for (; i < t.size(); ++i) {
    if (!IsDigit(t[i])) return false;
    if (__builtin_mul_overflow(v, 10u, &v) ||
        __builtin_add_overflow(v, static_cast<unsigned>(t[i] - '0'), &v)) {
      return false;
    }
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (v > limit) return false;
  *value = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

}  // namespace sightline::kineto
