#include "report/value_format.h"

#include <fmt/format.h>

#include <cmath>

#include "base/time_units.h"

namespace sightline {

std::string FormatCount(int64_t v) {
  // 1234567 -> "1,234,567": long counts stay readable.
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return v < 0 ? "-" + out : out;
}

std::string FormatValue(const Value& v, Unit unit) {
  if (std::holds_alternative<std::monostate>(v)) return "-";
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  const bool is_int = std::holds_alternative<int64_t>(v);
  const double d = is_int ? static_cast<double>(std::get<int64_t>(v)) : std::get<double>(v);
  if (!std::isfinite(d)) return "-";
  switch (unit) {
    case Unit::kDurationNs:
      return FormatDuration(static_cast<DurationNs>(std::llround(d)));
    case Unit::kTimestampNs:  // on the trace's own clock, whose origin differs between tools
      return is_int ? fmt::format("{}.{:09d} s", std::get<int64_t>(v) / kNsPerS,
                                  std::get<int64_t>(v) % kNsPerS)
                    : fmt::format("{:.9f} s", d / 1e9);
    case Unit::kBytes:
      return FormatBytes(static_cast<int64_t>(std::llround(d)));
    case Unit::kPercent:
      return fmt::format("{:.1f}%", d);
    case Unit::kGBps:
      return fmt::format("{:.2f} GB/s", d);
    case Unit::kRatio:
      return fmt::format("{:.2f}x", d);
    case Unit::kCount:
      return is_int ? FormatCount(std::get<int64_t>(v)) : fmt::format("{:.1f}", d);
    case Unit::kNumber:
    case Unit::kText:
      return is_int ? std::to_string(std::get<int64_t>(v)) : fmt::format("{:.4g}", d);
  }
  return "";
}

void WriteJsonValue(JsonWriter& w, const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    w.Int(*i);
  } else if (const auto* d = std::get_if<double>(&v)) {
    w.Double(*d);
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    w.String(*s);
  } else {
    w.Null();
  }
}

}  // namespace sightline
