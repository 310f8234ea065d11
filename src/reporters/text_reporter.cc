// Text reporter: the Report for a terminal, fitted to a width (120 columns by default). Tables are
// aligned (numbers right, text left); the widest text column is shortened with "..." to fit.
// Every string that may come from an input (names, paths, labels, notes) goes through P: controls
// and broken UTF-8 are shown as escapes, so a kernel name cannot move the cursor, recolour or
// clear the user's terminal, or break a table's line.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/time_units.h"
#include "base/utf8.h"
#include "report/value_format.h"
#include "reporters/reporter.h"

namespace sightline {
namespace {

std::string P(std::string_view s) { return PrintableText(s); }

// Columns a string takes: one per character (P'd strings are UTF-8; wide East Asian characters
// count as one).
size_t Columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The byte offset after the first `columns` characters of s.
size_t ByteOfColumn(std::string_view s, size_t columns) {
  size_t i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && columns-- == 0) break;
  }
  return i;
}

// Cuts the middle, not the end: kernel names differ in their tails (tile shapes, layouts); counted
// in characters, never inside one.
std::string Shorten(const std::string& s, size_t width) {
  const size_t n = Columns(s);
  if (n <= width) return s;
  if (width <= 3) return s.substr(0, ByteOfColumn(s, width));
  const size_t head = (width - 3) * 2 / 3;
  const size_t tail = width - 3 - head;
  return s.substr(0, ByteOfColumn(s, head)) + "..." + s.substr(ByteOfColumn(s, n - tail));
}

void RenderTable(std::string& out, const Table& t, int width) {
  // Columns shown: all, unless the table is too wide, then without the optional ones.
  std::vector<size_t> shown;
  std::vector<size_t> w_all(t.columns.size());
  std::vector<std::vector<std::string>> cells_all;
  cells_all.reserve(t.rows.size());
  for (size_t c = 0; c < t.columns.size(); ++c) w_all[c] = Columns(t.columns[c].title);
  for (const auto& row : t.rows) {
    std::vector<std::string>& r = cells_all.emplace_back();
    for (size_t c = 0; c < t.columns.size(); ++c) {
      r.push_back(c < row.size() ? P(FormatValue(row[c], t.columns[c].unit)) : "");
      w_all[c] = std::max(w_all[c], Columns(r.back()));
    }
  }
  const size_t budget = static_cast<size_t>(std::max(width, 40));
  auto width_of = [&](const std::vector<size_t>& cols, const std::vector<size_t>& w) {
    size_t total = 2;  // indent, then 2 spaces between columns
    for (size_t i = 0; i < cols.size(); ++i) total += w[cols[i]] + (i + 1 < cols.size() ? 2 : 0);
    return total;
  };
  for (size_t c = 0; c < t.columns.size(); ++c) shown.push_back(c);
  if (width_of(shown, w_all) > budget) {
    shown.clear();
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (!t.columns[c].optional) shown.push_back(c);
    }
  }
  if (shown.empty()) return;
  // Fit: take one character at a time from the widest text column, so long text columns end up
  // sharing the room evenly; none goes below 12 characters.
  std::vector<size_t> w = w_all;
  while (width_of(shown, w) > budget) {
    size_t widest = SIZE_MAX;
    for (size_t c : shown) {
      if (t.columns[c].unit == Unit::kText && w[c] > 12 &&
          (widest == SIZE_MAX || w[c] > w[widest])) {
        widest = c;
      }
    }
    if (widest == SIZE_MAX) break;
    --w[widest];
  }
  if (!t.title.empty()) fmt::format_to(std::back_inserter(out), "  {}\n", P(t.title));
  auto emit_row = [&](auto cell_of) {
    std::string line = "  ";
    for (size_t i = 0; i < shown.size(); ++i) {
      const size_t c = shown[i];
      const bool left = t.columns[c].unit == Unit::kText;
      const std::string s = Shorten(cell_of(c), w[c]);
      const std::string pad(w[c] - Columns(s), ' ');
      line += left ? s + pad : pad + s;
      if (i + 1 < shown.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit_row([&](size_t c) { return t.columns[c].title; });
  std::string rule = "  ";
  for (size_t i = 0; i < shown.size(); ++i) {
    rule += std::string(w[shown[i]], '-') + (i + 1 < shown.size() ? "  " : "");
  }
  out += rule + '\n';
  for (const auto& r : cells_all) emit_row([&](size_t c) { return r[c]; });
  if (t.total_rows > static_cast<int64_t>(t.rows.size())) {
    fmt::format_to(std::back_inserter(out), "  ... {} more rows (--top N shows more)\n",
                   t.total_rows - static_cast<int64_t>(t.rows.size()));
  }
  if (!t.note.empty()) fmt::format_to(std::back_inserter(out), "  {}\n", P(t.note));
  out += '\n';
}

void RenderHeading(std::string& out, const std::string& title, int width) {
  std::string line = "== " + P(title) + " ";
  const size_t columns = Columns(line);
  if (columns < static_cast<size_t>(std::max(width, 0))) line += std::string(width - columns, '=');
  out += line + "\n";
}

void RenderDiagnostics(std::string& out, const ReportInput& in) {
  if (in.diagnostics.empty()) return;
  fmt::format_to(std::back_inserter(out), "  Diagnostics for {} (data Sightline could not use):\n",
                 P(in.label));
  for (const Diagnostic& d : in.diagnostics.items()) {
    fmt::format_to(std::back_inserter(out), "  {:>12}  {}{} [{}]\n", FormatCount(d.count),
                   d.severity() == DiagnosticSeverity::kInfo ? "" : "warning: ", P(d.text()),
                   d.code());
  }
  out += '\n';
}

}  // namespace

std::string RenderTextReport(const Report& report, const TextReportOptions& options) {
  std::string out;
  fmt::format_to(std::back_inserter(out), "Sightline {} report\n", report.tool_version);
  for (size_t i = 0; i < report.inputs.size(); ++i) {
    const ReportInput& in = report.inputs[i];
    fmt::format_to(std::back_inserter(out), "  input {}: {} ({}{}{}{})\n", i, P(in.path),
                   P(in.format), in.format_version.empty() ? "" : " " + P(in.format_version),
                   in.producer.empty() ? "" : ", " + P(in.producer),
                   in.rank >= 0 ? fmt::format(", rank {}", in.rank) : "");
  }
  for (const InputFile& f : report.files) {
    if (f.reader.empty()) {
      fmt::format_to(std::back_inserter(out), "  file {}: {}\n", P(f.path), P(f.use));
    } else {
      fmt::format_to(std::back_inserter(out), "  file {}: read as {} ({}): {}\n", P(f.path),
                     f.reader, f.kind, P(f.use));
    }
  }
  out += '\n';

  if (!report.findings.empty()) {
    RenderHeading(out, "Findings (largest estimated saving first)", options.width);
    for (size_t i = 0; i < report.findings.size(); ++i) {
      const Finding& f = report.findings[i];
      fmt::format_to(std::back_inserter(out), "  {}. [{}] {} ({} ~{})\n", i + 1,
                     SeverityName(f.severity), P(f.title),
                     f.once_per_start ? "once per start" : "saves",
                     FormatDuration(f.estimated_savings_ns));
      if (!f.where.empty()) fmt::format_to(std::back_inserter(out), "     where: {}\n", P(f.where));
      for (const Fact& e : f.evidence) {
        fmt::format_to(std::back_inserter(out), "     {}: {}\n", P(e.label),
                       P(FormatValue(e.value, e.unit)));
      }
      fmt::format_to(std::back_inserter(out), "     fix: {}\n", P(f.recommendation));
    }
    out += '\n';
  }

  for (const Section& s : report.sections) {
    std::string title = s.title;
    if (report.inputs.size() > 1 && s.input >= 0 &&
        s.input < static_cast<int>(report.inputs.size())) {
      title += " — " + report.inputs[s.input].label;  // P'd with the title below
    }
    RenderHeading(out, title, options.width);
    std::vector<std::string> labels;
    size_t label_width = 0;
    for (const Fact& f : s.facts) {
      labels.push_back(P(f.label));
      label_width = std::max(label_width, Columns(labels.back()));
    }
    for (size_t i = 0; i < s.facts.size(); ++i) {
      fmt::format_to(std::back_inserter(out), "  {}{}  {}\n", labels[i],
                     std::string(label_width - Columns(labels[i]), ' '),
                     P(FormatValue(s.facts[i].value, s.facts[i].unit)));
    }
    if (!s.facts.empty()) out += '\n';
    for (const Table& t : s.tables) RenderTable(out, t, options.width);
    for (const std::string& n : s.notes) {
      fmt::format_to(std::back_inserter(out), "  note: {}\n", P(n));
    }
    if (!s.notes.empty()) out += '\n';
  }

  bool any_diagnostics = false;
  for (const ReportInput& in : report.inputs) any_diagnostics |= !in.diagnostics.empty();
  if (any_diagnostics) {
    RenderHeading(out, "Diagnostics", options.width);
    for (const ReportInput& in : report.inputs) RenderDiagnostics(out, in);
  }
  return out;
}

}  // namespace sightline
