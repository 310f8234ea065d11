// A CSV reader for tool exports (RFC 4180): quoted fields with "" escapes, separators and line
// breaks inside quotes, CRLF or LF line ends. Used by the Nsight Compute reader.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sightline {

using CsvRow = std::vector<std::string>;

// Parses `text` into rows of fields. An empty line is a row with one empty field. InvalidInput
// when a quoted field is not closed (the file was cut short), naming the line it started on.
StatusOr<std::vector<CsvRow>> ParseCsv(std::string_view text);

}  // namespace sightline
