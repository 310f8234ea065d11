// Small helpers for the HTML reporter: value formatting and the report's SVG charts (on the SVG
// kit of src/svg). Everything returns markup strings; nothing here sees more than it is given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"
#include "svg/svg_util.h"

namespace sightline::html {

// Escaping is the SVG kit's (svg/svg_util.h).
using svg::XmlEscape;

// The value to sort a cell by: numbers as themselves, text as itself, empty for no value.
std::string SortKey(const Value& v);

// An axis label for a number in `unit` (short form).
std::string FormatAxis(double v, Unit unit);

struct Marker {  // a vertical line at x (e.g. an iteration boundary)
  double x = 0;
  std::string label;
};

// A step chart of y over x (x increasing; each point holds until the next), with vertical markers.
// y_max <= 0: scaled to the data.
std::string StepChartSvg(const Series& series, const std::vector<Marker>& markers, double y_max);

// Several lines over time (Series::lines), each with its band up to the bucket's largest value
// (band_max), broken where a value is NaN, with vertical markers and a legend under the x axis. The
// plot has the step chart's geometry, so that the two line up one above the other. y_max <= 0:
// scaled to the data.
std::string LinesChartSvg(const Series& series, const std::vector<Marker>& markers, double y_max);

// A cumulative distribution (Series style kCdf): a step line of y% over x, on a log x axis when x
// spans more than a decade, with dashed guides at p50, p90 and p99.
std::string CdfChartSvg(const Series& series);

// A column chart, one column per point (e.g. wall time per iteration).
std::string ColumnChartSvg(const Series& series);

// A horizontal bar chart: one labelled bar per item, values in `unit`.
struct Bar {
  std::string label;
  double value = 0;
};
std::string BarChartSvg(const std::vector<Bar>& bars, Unit unit);

}  // namespace sightline::html
