// The SVG kit shared by the HTML report's charts (src/reporters/html) and the all-reduce plots
// (src/allreduce): escaping, colour scales, axis ranges and ticks, compact number labels. A stage
// of its own below both, so neither reaches into the other.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sightline::svg {

// Escapes &, <, >, " and ' so that text is safe in element content and in quoted attributes.
std::string XmlEscape(std::string_view s);

// The axis end for data up to v: the next 1, 2, 2.5, 5 x 10^k at or above v; 1 for v <= 0.
double NiceMax(double v);

// "#rrggbb" at t in [0, 1] along the scale's stops.
std::string Viridis(double t);  // dark blue (fast) .. yellow (slow)
std::string HeatRed(double t);  // near white (0) .. dark red
// Black or white, whichever reads better on the fill.
std::string TextColourOn(const std::string& fill);

struct Tick {
  double value = 0;
  std::string label;
};

// Ticks at 1, 2, 5 x 10^k within [lo, hi] (lo > 0), labelled by `format`.
std::vector<Tick> LogTicks(double lo, double hi, std::string (*format)(double));
// About `n` evenly spaced round ticks from 0 to at least hi; the last is the axis end.
std::vector<Tick> LinearTicks(double hi, int n, std::string (*format)(double));

// 3 significant digits, no exponent: 0.123, 9.31, 93.1, 931, 9310.
std::string FormatCompact(double v);
// Axis ticks: 1, 20, 0.5, 1000 (no trailing zeros).
std::string FormatTick(double v);
// "12.5%", "3%", "0%".
std::string FormatPercent(double v);
// Byte sizes in binary units: 1K, 256K, 64M, 1G (non-powers get one decimal: 1.5M).
std::string FormatSize(double bytes);
// A grid value: 512, 4K (4096), 16K.
std::string FormatGridValue(int64_t v);

}  // namespace sightline::svg
