// The charts of the HTML report (a step line over time buckets, several lines with bands, a
// cumulative distribution, columns, labelled bars) on the SVG kit. They see numbers and axis
// formats only; the HTML reporter maps the Report's series onto them (reporters/html/html_util.h).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "svg/svg_util.h"

namespace sightline::svg {

// An axis label for a value (a duration, a percentage, ...).
using AxisFormat = std::function<std::string(double)>;

struct Marker {  // a vertical dashed line at x (e.g. an iteration's start)
  double x = 0;
  std::string label;
};

struct ChartMark {  // a labelled dot (e.g. the peak)
  double x = 0, y = 0;
  std::string label;
};

struct ChartLine {  // one of several named lines over the chart's x
  std::string label;
  std::span<const double> y, band_max;  // NaN: no data (a gap)
};

// One chart's data, as views of the caller's vectors.
struct XYChart {
  std::string title;
  std::span<const double> x, y;
  std::span<const double> y2;  // a second line, dashed (empty: none)
  std::string y_label, y2_label;
  std::vector<ChartMark> marks;
  std::vector<ChartLine> lines;
  AxisFormat x_format, y_format;
};

// A step chart of y over x (x increasing; each point holds until the next), with vertical markers.
// y_max <= 0: scaled to the data.
std::string StepChartSvg(const XYChart& chart, const std::vector<Marker>& markers, double y_max);

// Several lines over time (XYChart::lines), each with its band up to the bucket's largest value
// (band_max), broken where a value is NaN, with vertical markers and a legend under the x axis. The
// plot has the step chart's geometry, so that the two line up one above the other. y_max <= 0:
// scaled to the data.
std::string LinesChartSvg(const XYChart& chart, const std::vector<Marker>& markers, double y_max);

// A cumulative distribution (y% over x): a step line on a log x axis when x spans more than a
// decade, with dashed guides at p50, p90 and p99.
std::string CdfChartSvg(const XYChart& chart);

// A column chart, one column per point (e.g. wall time per iteration).
std::string ColumnChartSvg(const XYChart& chart);

// A horizontal bar chart: one labelled bar per item.
struct Bar {
  std::string label;
  double value = 0;
};
std::string BarChartSvg(const std::vector<Bar>& bars, const AxisFormat& format);

}  // namespace sightline::svg
