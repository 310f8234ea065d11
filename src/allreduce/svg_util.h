// Shared pieces of the all-reduce plots (stand-alone SVG files, no CSS): colour scales, log and
// linear ticks, and compact number labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sightline::arplot {

// "#rrggbb" at t in [0, 1] along the scale's stops.
std::string Viridis(double t);  // dark blue (fast) .. yellow (slow)
std::string HeatRed(double t);  // near white (0) .. dark red
// Black or white, whichever reads better on the fill.
std::string TextColourOn(const std::string& fill);
// The categorical colour of a strategy index (0 NCCL, 1 one-shot, 2 two-shot).
std::string StrategyColour(int strategy);

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

}  // namespace sightline::arplot
