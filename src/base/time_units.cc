#include "base/time_units.h"

#include <fmt/format.h>

#include <cstdlib>

namespace sightline {

std::string FormatDuration(DurationNs ns) {
  const double v = static_cast<double>(ns);
  const double a = std::abs(v);
  if (a < 1e3) return fmt::format("{} ns", ns);
  if (a < 1e6) return fmt::format("{:.2f} us", v / 1e3);
  if (a < 1e9) return fmt::format("{:.2f} ms", v / 1e6);
  return fmt::format("{:.2f} s", v / 1e9);
}

std::string FormatBytes(int64_t bytes) {
  const double v = static_cast<double>(bytes);
  const double a = std::abs(v);
  if (a < 1024) return fmt::format("{} B", bytes);
  if (a < 1024.0 * 1024) return fmt::format("{:.1f} KiB", v / 1024);
  if (a < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", v / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", v / (1024.0 * 1024 * 1024));
}

}  // namespace sightline
