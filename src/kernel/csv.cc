// A single-pass CSV state machine; a field that starts with a quote runs to its closing quote.
#include "kernel/csv.h"

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
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    switch (c) {
      case '"':
        if (field.empty() && !was_quoted) {
          quoted = was_quoted = true;
          quote_line = line;
        } else {
          field.push_back(c);  // a stray quote inside an unquoted field is kept as text
        }
        break;
      case ',':
        end_field();
        break;
      case '\r':
        if (i + 1 < text.size() && text[i + 1] == '\n') break;
        end_row();
        ++line;
        break;
      case '\n':
        end_row();
        ++line;
        break;
      default:
        field.push_back(c);
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
