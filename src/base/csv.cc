// A single-pass CSV state machine; a field that starts with a quote runs to its closing quote.
#include "base/csv.h"

#include <algorithm>

namespace sightline {

StatusOr<std::vector<CsvRow>> ParseCsv(std::string_view text) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the current field started with a quote
  int64_t line = 1, quote_line = 0;
  auto end_field = [&] {
    row.push_back(std::move(field));
    field.clear();
    was_quoted = false;
  };
  auto end_row = [&] {
    end_field();
    rows.push_back(std::move(row));
    row.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    if (quoted) {
      // Up to the next quote: a doubled one is a quote in the field, else the field's end.
      const size_t q = text.find('"', i);
      const std::string_view run = text.substr(i, q == std::string_view::npos ? q : q - i);
      field.append(run);
      line += std::count(run.begin(), run.end(), '\n');
      if (q == std::string_view::npos) break;
      if (q + 1 < text.size() && text[q + 1] == '"') {
        field.push_back('"');
        i = q + 2;
      } else {
        quoted = false;
        i = q + 1;
      }
      continue;
    }
    // Plain text up to the next character that means something.
    const size_t j = text.find_first_of("\",\r\n", i);
    field.append(text.substr(i, j == std::string_view::npos ? j : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
    switch (text[j]) {
      case '"':
        if (field.empty() && !was_quoted) {
          quoted = was_quoted = true;
          quote_line = line;
        } else {
          field.push_back('"');  // a stray quote inside an unquoted field is kept as text
        }
        break;
      case ',':
        end_field();
        break;
      case '\r':
        if (i < text.size() && text[i] == '\n') break;
        end_row();
        ++line;
        break;
      default:  // '\n'
        end_row();
        ++line;
    }
  }
  if (quoted) {
    return InvalidInputError("a quoted CSV field that starts on line " +
                             std::to_string(quote_line) + " is not closed (file cut short?)");
  }
  if (!field.empty() || !row.empty() || was_quoted) end_row();
  return rows;
}

}  // namespace sightline
