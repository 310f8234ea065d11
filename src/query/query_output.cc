#include "query/query_output.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/json_writer.h"
#include "base/utf8.h"
#include "report/value_format.h"

namespace sightline {
namespace {

std::string Plain(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return "";
}

// Display width in code points (close enough for names and numbers).
size_t Width(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string RenderQueryTable(const QueryResult& result) {
  const size_t n = result.columns.size();
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width(n, 0);
  std::vector<bool> numeric(n, true);
  for (size_t c = 0; c < n; ++c) width[c] = Width(result.columns[c]);
  for (const auto& row : result.rows) {
    auto& out = cells.emplace_back();
    for (size_t c = 0; c < n; ++c) {
      // A cell shows its controls, never obeys them (names come from the trace).
      std::string s = c < row.size() ? PrintableText(Plain(row[c]), false) : "";
      if (s.size() > 200) s = s.substr(0, 197) + "...";
      if (c < row.size() && std::holds_alternative<std::string>(row[c])) numeric[c] = false;
      width[c] = std::max(width[c], Width(s));
      out.push_back(std::move(s));
    }
  }
  std::string text;
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (size_t c = 0; c < n; ++c) {
      const size_t pad = width[c] - std::min(width[c], Width(row[c]));
      if (c > 0) l += "  ";
      if (numeric[c])
        l += std::string(pad, ' ') + row[c];
      else
        l += row[c] + (c + 1 < n ? std::string(pad, ' ') : "");
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    text += l + "\n";
  };
  line(result.columns);
  std::vector<std::string> rule;
  for (size_t c = 0; c < n; ++c) rule.emplace_back(width[c], '-');
  line(rule);
  for (const auto& row : cells) line(row);
  text += fmt::format("({} row{}{})\n", result.rows.size(), result.rows.size() == 1 ? "" : "s",
                      result.truncated ? "; more rows were left out: --max-rows N shows more" : "");
  return text;
}

std::string RenderQueryCsv(const QueryResult& result) {
  auto field = [](std::string_view s) {
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
    std::string q = "\"";
    for (char c : s) {
      if (c == '"') q += '"';
      q += c;
    }
    return q + "\"";
  };
  std::string out;
  for (size_t c = 0; c < result.columns.size(); ++c) {
    out += (c ? "," : "") + field(result.columns[c]);
  }
  out += "\r\n";
  for (const auto& row : result.rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + field(Plain(row[c]));
    out += "\r\n";
  }
  return out;
}

std::string RenderQueryJson(const QueryResult& result) {
  JsonWriter w(0);
  w.BeginObject().Key("columns").BeginArray();
  for (const std::string& c : result.columns) w.String(c);
  w.EndArray().Key("rows").BeginArray();
  for (const auto& row : result.rows) {
    w.BeginArray();
    for (const Value& v : row) WriteJsonValue(w, v);
    w.EndArray();
  }
  w.EndArray().Key("truncated").Bool(result.truncated).EndObject();
  return w.Take() + "\n";
}

}  // namespace sightline
