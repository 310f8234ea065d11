#include "base/input_limits.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

namespace sightline {

bool ParseByteCount(const std::string& text, uint64_t* bytes) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value < 0) return false;
  double scale = 1;
  std::string suffix(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix == "K" || suffix == "k" || suffix == "Ki") {
    scale = 1024.0;
  } else if (suffix == "M" || suffix == "m" || suffix == "Mi") {
    scale = 1024.0 * 1024;
  } else if (suffix == "G" || suffix == "g" || suffix == "Gi") {
    scale = 1024.0 * 1024 * 1024;
  } else if (suffix == "T" || suffix == "t" || suffix == "Ti") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else if (!suffix.empty()) {
    return false;
  }
  const double total = value * scale;
  if (total >= 1.8e19) return false;
  *bytes = static_cast<uint64_t>(total);
  return *bytes > 0;
}

StatusOr<uint64_t> MaxInflatedBytes() {
  if (const char* env = std::getenv(kMaxInputSizeEnv); env != nullptr && *env != '\0') {
    uint64_t bytes = 0;
    if (!ParseByteCount(env, &bytes)) {
      return InvalidArgumentError(fmt::format(
          "{}='{}' is not a size; give bytes with an optional K, M, G or T suffix, e.g. {}=64G",
          kMaxInputSizeEnv, env, kMaxInputSizeEnv));
    }
    return bytes;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return uint64_t{8} << 30;  // unknown: a modest default
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 2;
}

Status InflatedTooLargeError(const std::string& path, uint64_t compressed_bytes, uint64_t limit) {
  return InvalidInputError(fmt::format(
      "{}: the gzip data ({} bytes) inflates to more than {} bytes ({:.1f} GiB), the limit that "
      "protects this machine's memory: it is a gzip bomb or damaged, or a trace larger than this "
      "machine can analyze. If the file is genuine, analyze it on a larger machine or raise the "
      "limit with {}=SIZE (e.g. {}=64G)",
      path, compressed_bytes, limit, static_cast<double>(limit) / (1024.0 * 1024 * 1024),
      kMaxInputSizeEnv, kMaxInputSizeEnv));
}

}  // namespace sightline
