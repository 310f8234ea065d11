// How a report Value is shown to people: "1.23 ms", "4.0 MiB", "12.3%", "1,234". Shared by the text
// and HTML reporters so both print the same numbers the same way; and how one is written as JSON
// (the JSON report, query results, the MCP server's answers).
#pragma once

#include <cstdint>
#include <string>

#include "base/json_writer.h"
#include "report/report.h"

namespace sightline {

// 1234567 -> "1,234,567".
std::string FormatCount(int64_t v);
// A value in its unit; "-" for no value or a non-finite number.
std::string FormatValue(const Value& v, Unit unit);
// A value as JSON: an integer, a number, a string, or null for no value.
void WriteJsonValue(JsonWriter& w, const Value& v);

}  // namespace sightline
