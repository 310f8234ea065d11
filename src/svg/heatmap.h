// A stand-alone SVG heatmap (the all-reduce plots): rows and columns of labelled cells, a value
// (and an optional second line) in every cell, and a colour bar or a categorical legend.
#pragma once

#include <string>
#include <vector>

#include "svg/svg_util.h"

namespace sightline::svg {

struct HeatCell {
  bool present = false;  // false: drawn grey with a dash
  std::string fill;      // "#rrggbb"
  std::string text;      // first line
  std::string sub;       // optional second line, smaller
  std::string tooltip;   // <title> of the cell
  bool outline = false;  // a heavy border (e.g. the best strategy)
};

struct ColourBar {  // a continuous legend
  std::string label;
  std::vector<std::string> stops;  // colours at evenly spaced positions, left to right
  std::vector<std::pair<double, std::string>> ticks;  // position in [0, 1], label
};

struct LegendItem {  // a categorical legend
  std::string colour;
  std::string label;
};

struct Heatmap {
  std::string title;
  std::string subtitle;
  std::string x_title, y_title;
  std::vector<std::string> columns;  // x labels, left to right
  std::vector<std::string> rows;     // y labels, top to bottom
  std::vector<HeatCell> cells;       // [row * columns.size() + column]
  ColourBar bar;                     // used when legend is empty
  std::vector<LegendItem> legend;
};

std::string HeatmapSvg(const Heatmap& map);

}  // namespace sightline::svg
