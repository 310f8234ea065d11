// Small helpers for the HTML reporter: escaping, value formatting, and hand-written SVG charts.
// Everything returns markup strings; nothing here sees more than the numbers it is given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"

namespace sightline::html {

// Escapes &, <, >, " and ' so that text is safe in element content and in quoted attributes.
std::string Escape(std::string_view s);

// The value to sort a cell by: numbers as themselves, text as itself, empty for no value.
std::string SortKey(const Value& v);

// An axis label for a number in `unit` (short form).
std::string FormatAxis(double v, Unit unit);

struct Marker {  // a vertical line at x (e.g. an iteration boundary)
  double x = 0;
  std::string label;
};

// A line chart of y over x (x increasing). y_max <= 0: scaled to the data.
std::string LineChartSvg(const Series& series, const std::vector<Marker>& markers, double y_max);

// A column chart, one column per point (e.g. wall time per iteration).
std::string ColumnChartSvg(const Series& series);

// A horizontal bar chart: one labelled bar per item, values in `unit`.
struct Bar {
  std::string label;
  double value = 0;
};
std::string BarChartSvg(const std::vector<Bar>& bars, Unit unit);

}  // namespace sightline::html
