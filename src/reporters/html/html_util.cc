#include "reporters/html/html_util.h"

#include <fmt/format.h>

#include <cmath>

#include "base/time_units.h"
#include "report/value_format.h"

namespace sightline::html {

std::string SortKey(const Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  if (std::holds_alternative<double>(v)) {
    const double d = std::get<double>(v);
    return std::isfinite(d) ? fmt::format("{}", d) : "";
  }
  return "";
}

std::string FormatAxis(double v, Unit unit) {
  switch (unit) {
    case Unit::kDurationNs:
    case Unit::kTimestampNs:
      return FormatDuration(static_cast<DurationNs>(std::llround(v)));
    case Unit::kPercent:
      return fmt::format("{:.0f}%", v);
    case Unit::kBytes:
      return FormatBytes(static_cast<int64_t>(std::llround(v)));
    default:
      return fmt::format("{:.4g}", v);
  }
}

namespace {

svg::AxisFormat AxisIn(Unit unit) {
  return [unit](double v) { return FormatAxis(v, unit); };
}

}  // namespace

svg::XYChart ChartOf(const Series& series) {
  svg::XYChart c;
  c.title = series.title;
  c.x = series.x;
  c.y = series.y;
  c.y2 = series.y2;
  c.y_label = series.y_label;
  c.y2_label = series.y2_label;
  for (const Series::Mark& m : series.marks) c.marks.push_back({m.x, m.y, m.label});
  for (const Series::Line& l : series.lines) c.lines.push_back({l.label, l.y, l.band_max});
  c.x_format = AxisIn(series.x_unit);
  c.y_format = AxisIn(series.y_unit);
  return c;
}

std::string StepChartSvg(const Series& series, const std::vector<Marker>& markers, double y_max) {
  return svg::StepChartSvg(ChartOf(series), markers, y_max);
}

std::string LinesChartSvg(const Series& series, const std::vector<Marker>& markers, double y_max) {
  return svg::LinesChartSvg(ChartOf(series), markers, y_max);
}

std::string CdfChartSvg(const Series& series) { return svg::CdfChartSvg(ChartOf(series)); }

std::string ColumnChartSvg(const Series& series) { return svg::ColumnChartSvg(ChartOf(series)); }

std::string BarChartSvg(const std::vector<Bar>& bars, Unit unit) {
  return svg::BarChartSvg(bars, AxisIn(unit));
}

}  // namespace sightline::html
