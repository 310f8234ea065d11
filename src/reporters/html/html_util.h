// Small helpers for the HTML reporter: value formatting, and the Report's
// series mapped onto the charts of the SVG kit (svg/chart.h). Everything
// returns markup strings; nothing here sees more than it is given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"
#include "svg/chart.h"
#include "svg/svg_util.h"

namespace sightline::html {

// Escaping is the SVG kit's (svg/svg_util.h).
using svg::XmlEscape;
using Marker = svg::Marker;
using Bar = svg::Bar;

// The value to sort a cell by: numbers as themselves, text as itself, empty for
// no value.
std::string SortKey(const Value& v);

// An axis label for a number in `unit` (short form).
std::string FormatAxis(double v, Unit unit);

// The chart data of a series: its numbers (views: the series must outlive it),
// labelled with the series' units.
svg::XYChart ChartOf(const Series& series);

// The charts of svg/chart.h, for a series (see there).
std::string StepChartSvg(const Series& series, const std::vector<Marker>& markers, double y_max);
std::string LinesChartSvg(const Series& series, const std::vector<Marker>& markers, double y_max);
std::string CdfChartSvg(const Series& series);
std::string ColumnChartSvg(const Series& series);
std::string BarChartSvg(const std::vector<Bar>& bars, Unit unit);

}  // namespace sightline::html
