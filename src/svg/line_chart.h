// A stand-alone SVG line chart (the all-reduce size sweep): one line per series over a log2 x axis
// (message size), on a log or linear y axis, with a legend.
#pragma once

#include <string>
#include <vector>

#include "svg/svg_util.h"

namespace sightline::svg {

struct Line {
  std::string label;
  std::string colour;
  std::vector<double> x, y;  // points with a NaN or non-positive (log axes) value are skipped
};

struct LineChart {
  std::string title;
  std::string subtitle;
  std::string x_title, y_title;
  bool log_y = false;
  std::string (*x_format)(double) = FormatSize;  // x is always a log axis
  std::string (*y_format)(double) = FormatCompact;
  std::vector<Line> lines;
};

std::string LineChartSvg(const LineChart& chart);

}  // namespace sightline::svg
