// ParseByteSize: digits with an optional binary unit; hex for values copied from ptxas output.
#include "kernel/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace sightline {

StatusOr<int64_t> ParseByteSize(std::string_view text, std::string_view what) {
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s.push_back(c);
  }
  auto bad = [&]() {
    return InvalidArgumentError(std::string(what) + ": '" + std::string(text) +
                                "' is not a size; use bytes or K/KiB (e.g. 49152, 48K, 48KiB)");
  };
  if (s.empty() || s[0] == '-') return bad();
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str() + 2, &end, 16);
    if (end == s.c_str() + 2 || *end != '\0') return bad();
    return static_cast<int64_t>(v);
  }
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return bad();
  char* end = nullptr;
  const std::string number = s.substr(0, i);
  const double v = std::strtod(number.c_str(), &end);
  if (*end != '\0') return bad();
  std::string unit;
  for (char c : s.substr(i)) unit.push_back(static_cast<char>(std::tolower(c)));
  double scale = 1;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit == "k" || unit == "kb" || unit == "kib") {
    scale = 1024;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    scale = 1024.0 * 1024.0;
  } else {
    return bad();
  }
  const double bytes = v * scale;
  if (bytes != std::floor(bytes) || bytes > 1e15) return bad();
  return static_cast<int64_t>(bytes);
}

}  // namespace sightline
