#include "base/input_limits.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

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
  return UsableMemory().bytes / 2;
}

std::optional<uint64_t> ParseCgroupMemoryLimit(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  if (text.empty() || text == "max") return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  // cgroup v1 writes "no limit" as the largest page-aligned int64 (9223372036854771712).
  if (v >= (uint64_t{1} << 62)) return std::nullopt;
  return v;
}

namespace {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream f(path);
  std::string text;
  std::getline(f, text, '\0');
  return text.substr(0, 4096);
}

// The tightest memory limit of this process's cgroup and its parents (v2: memory.max; v1:
// memory.limit_in_bytes), where the hierarchy is mounted at /sys/fs/cgroup.
std::optional<uint64_t> CgroupMemoryLimit() {
  std::optional<uint64_t> best;
  auto take = [&best](const std::string& file) {
    const std::optional<uint64_t> v = ParseCgroupMemoryLimit(ReadSmallFile(file));
    if (v && (!best || *v < *best)) best = v;
  };
  std::istringstream lines(ReadSmallFile("/proc/self/cgroup"));
  std::string line;
  while (std::getline(lines, line)) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    const bool v2 = controllers.empty();
    if (!v2 && controllers.find("memory") == std::string::npos) continue;
    const std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const std::string file = v2 ? "/memory.max" : "/memory.limit_in_bytes";
    for (;;) {  // the cgroup and each parent up to the root
      take(root + (path == "/" ? "" : path) + file);
      if (path.empty() || path == "/") break;
      const size_t slash = path.rfind('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
  return best;
}

}  // namespace

UsableMemoryInfo UsableMemory() {
  UsableMemoryInfo m;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    m.bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
    m.source = "this machine's physical memory";
  } else {
    m.bytes = uint64_t{16} << 30;  // unknown: a modest assumption
    m.source = "an assumed 16 GiB (physical memory unknown)";
  }
  if (const std::optional<uint64_t> cg = CgroupMemoryLimit(); cg && *cg < m.bytes) {
    m.bytes = *cg;
    m.source = "this container's memory limit (cgroup)";
  }
  for (const auto& [resource, name] :
       {std::pair{RLIMIT_AS, "the address-space limit (ulimit -v)"},
        std::pair{RLIMIT_DATA, "the data-segment limit (ulimit -d)"}}) {
    struct rlimit r {};
    if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY && r.rlim_cur < m.bytes) {
      m.bytes = r.rlim_cur;
      m.source = name;
    }
  }
  return m;
}

std::string InputLimitSource() {
  if (const char* env = std::getenv(kMaxInputSizeEnv); env != nullptr && *env != '\0') {
    return fmt::format("{}={}", kMaxInputSizeEnv, env);
  }
  return "half of " + UsableMemory().source;
}

Status InflatedTooLargeError(const std::string& path, uint64_t compressed_bytes, uint64_t limit,
                             std::string_view compression) {
  const bool gzip = compression == "gzip";
  const std::string size =
      compressed_bytes > 0 ? fmt::format(" ({} bytes)", compressed_bytes) : std::string();
  return InvalidInputError(fmt::format(
      "{}: the {} data{} {} to more than {} bytes ({:.1f} GiB), the limit that protects this "
      "machine's memory ({}): it is a {} bomb or damaged, or a trace larger than this machine can "
      "analyze. If the file is genuine, analyze it on a larger machine or raise the limit with "
      "{}=SIZE (e.g. {}=64G)",
      path, compression, size, gzip ? "inflates" : "decompresses", limit,
      static_cast<double>(limit) / (1024.0 * 1024 * 1024), InputLimitSource(), compression,
      kMaxInputSizeEnv, kMaxInputSizeEnv));
}

Status OutOfMemoryForInputError(const std::string& path, uint64_t bytes) {
  return InvalidInputError(fmt::format(
      "{}: out of memory: its content takes {} bytes ({:.2f} GiB), within the input limit ({}), "
      "but this process could not get that much memory now (other inputs, or a tighter limit "
      "than the one measured). Free memory, raise the limit on this process (ulimit -v, the "
      "container's memory), or analyze fewer or smaller files at once",
      path, bytes, static_cast<double>(bytes) / (1024.0 * 1024 * 1024), InputLimitSource()));
}

}  // namespace sightline
