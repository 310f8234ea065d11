// Text reporter: the Report for a terminal, fitted to a width (120 columns by default). Tables are
// aligned (numbers right, text left); the widest text column is shortened with "..." to fit.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/time_units.h"
#include "reporters/reporter.h"

namespace sightline {
namespace {

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
    case Unit::kTimestampNs:
      return FormatDuration(static_cast<DurationNs>(std::llround(d)));
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

std::string Shorten(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  if (width <= 3) return s.substr(0, width);
  return s.substr(0, width - 3) + "...";
}

void RenderTable(std::string& out, const Table& t, int width) {
  const size_t ncol = t.columns.size();
  if (ncol == 0) return;
  std::vector<std::vector<std::string>> cells;
  cells.reserve(t.rows.size());
  std::vector<size_t> w(ncol);
  for (size_t c = 0; c < ncol; ++c) w[c] = t.columns[c].title.size();
  for (const auto& row : t.rows) {
    std::vector<std::string>& r = cells.emplace_back();
    for (size_t c = 0; c < ncol; ++c) {
      r.push_back(c < row.size() ? FormatValue(row[c], t.columns[c].unit) : "");
      w[c] = std::max(w[c], r.back().size());
    }
  }
  // Fit: shrink the widest text column until the line fits (indent 2, 2 spaces between columns).
  const size_t budget = static_cast<size_t>(std::max(width, 40));
  auto line_width = [&] {
    size_t total = 2;
    for (size_t c = 0; c < ncol; ++c) total += w[c] + (c + 1 < ncol ? 2 : 0);
    return total;
  };
  while (line_width() > budget) {
    size_t widest = ncol;
    for (size_t c = 0; c < ncol; ++c) {
      if (t.columns[c].unit == Unit::kText && w[c] > 12 && (widest == ncol || w[c] > w[widest])) {
        widest = c;
      }
    }
    if (widest == ncol) break;
    w[widest] = std::max<size_t>(12, w[widest] - (line_width() - budget));
  }
  if (!t.title.empty()) fmt::format_to(std::back_inserter(out), "  {}\n", t.title);
  auto emit_row = [&](const std::vector<std::string>& r, bool header) {
    std::string line = "  ";
    for (size_t c = 0; c < ncol; ++c) {
      const bool left = t.columns[c].unit == Unit::kText || header;
      const std::string s = Shorten(r[c], w[c]);
      const std::string pad(w[c] - s.size(), ' ');
      line += left && !(header && t.columns[c].unit != Unit::kText) ? s + pad : pad + s;
      if (c + 1 < ncol) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  std::vector<std::string> header;
  for (const Column& c : t.columns) header.push_back(c.title);
  emit_row(header, true);
  std::string rule = "  ";
  for (size_t c = 0; c < ncol; ++c) rule += std::string(w[c], '-') + (c + 1 < ncol ? "  " : "");
  out += rule + '\n';
  for (const auto& r : cells) emit_row(r, false);
  if (t.total_rows > static_cast<int64_t>(t.rows.size())) {
    fmt::format_to(std::back_inserter(out),
                   "  ... {} more rows (--top N shows more; --format json has all kept rows)\n",
                   t.total_rows - static_cast<int64_t>(t.rows.size()));
  }
  if (!t.note.empty()) fmt::format_to(std::back_inserter(out), "  {}\n", t.note);
  out += '\n';
}

void RenderHeading(std::string& out, const std::string& title, int width) {
  std::string line = "== " + title + " ";
  if (static_cast<int>(line.size()) < width) line += std::string(width - line.size(), '=');
  out += line + "\n";
}

void RenderDiagnostics(std::string& out, const ReportInput& in) {
  if (in.diagnostics.empty()) return;
  fmt::format_to(std::back_inserter(out), "  Diagnostics for {} (data Sightline could not use):\n",
                 in.label);
  for (const Diagnostic& d : in.diagnostics.items()) {
    fmt::format_to(std::back_inserter(out), "  {:>12}  {}{} [{}]\n", FormatCount(d.count),
                   d.severity == DiagnosticSeverity::kInfo ? "" : "warning: ", d.message, d.code);
  }
  out += '\n';
}

}  // namespace

std::string RenderTextReport(const Report& report, const TextReportOptions& options) {
  std::string out;
  fmt::format_to(std::back_inserter(out), "Sightline {} report\n", report.tool_version);
  for (size_t i = 0; i < report.inputs.size(); ++i) {
    const ReportInput& in = report.inputs[i];
    fmt::format_to(std::back_inserter(out), "  input {}: {} ({}{}{}{})\n", i, in.path, in.format,
                   in.format_version.empty() ? "" : " " + in.format_version,
                   in.producer.empty() ? "" : ", " + in.producer,
                   in.rank >= 0 ? fmt::format(", rank {}", in.rank) : "");
  }
  out += '\n';

  if (!report.findings.empty()) {
    RenderHeading(out, "Findings (largest estimated saving first)", options.width);
    for (size_t i = 0; i < report.findings.size(); ++i) {
      const Finding& f = report.findings[i];
      fmt::format_to(std::back_inserter(out), "  {}. [{}] {} (saves ~{})\n", i + 1,
                     SeverityName(f.severity), f.title, FormatDuration(f.estimated_savings_ns));
      if (!f.where.empty()) fmt::format_to(std::back_inserter(out), "     where: {}\n", f.where);
      for (const Fact& e : f.evidence) {
        fmt::format_to(std::back_inserter(out), "     {}: {}\n", e.label,
                       FormatValue(e.value, e.unit));
      }
      fmt::format_to(std::back_inserter(out), "     fix: {}\n", f.recommendation);
    }
    out += '\n';
  }

  for (const Section& s : report.sections) {
    std::string title = s.title;
    if (report.inputs.size() > 1 && s.input >= 0 &&
        s.input < static_cast<int>(report.inputs.size())) {
      title += " — " + report.inputs[s.input].label;
    }
    RenderHeading(out, title, options.width);
    size_t label_width = 0;
    for (const Fact& f : s.facts) label_width = std::max(label_width, f.label.size());
    for (const Fact& f : s.facts) {
      fmt::format_to(std::back_inserter(out), "  {:<{}}  {}\n", f.label, label_width,
                     FormatValue(f.value, f.unit));
    }
    if (!s.facts.empty()) out += '\n';
    for (const Table& t : s.tables) RenderTable(out, t, options.width);
    for (const std::string& n : s.notes) fmt::format_to(std::back_inserter(out), "  note: {}\n", n);
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
