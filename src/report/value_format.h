// How a report Value is shown to people: "1.23 ms", "4.0 MiB", "12.3%", "1,234". Shared by the text
// and HTML reporters so both print the same numbers the same way.
#pragma once

#include <cstdint>
#include <string>

#include "report/report.h"

namespace sightline {

// 1234567 -> "1,234,567".
std::string FormatCount(int64_t v);
// A value in its unit; "-" for no value or a non-finite number.
std::string FormatValue(const Value& v, Unit unit);

}  // namespace sightline
