#include "svg/svg_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include "base/utf8.h"

namespace sightline::svg {
namespace {

struct Rgb {
  double r, g, b;
};

std::string Interpolate(const std::vector<Rgb>& stops, double t) {
  if (!std::isfinite(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0) * static_cast<double>(stops.size() - 1);
  const size_t i = std::min(static_cast<size_t>(t), stops.size() - 2);
  const double f = t - static_cast<double>(i);
  auto mix = [&](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(stops[i].r, stops[i + 1].r),
                     mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b));
}

}  // namespace

std::string XmlEscape(std::string_view raw) {
  // Controls and bytes that are not UTF-8 cannot appear in XML (nor sensibly in HTML): shown as
  // the text report shows them (\x1b, \xff), so the document stays well formed.
  const std::string s = PrintableText(raw, /*keep_line_breaks=*/true);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

double NiceMax(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

std::string Viridis(double t) {
  static const std::vector<Rgb> kStops = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  return Interpolate(kStops, t);
}

std::string HeatRed(double t) {
  static const std::vector<Rgb> kStops = {
      {255, 255, 240}, {254, 217, 118}, {253, 141, 60}, {227, 26, 28}, {128, 0, 38}};
  return Interpolate(kStops, t);
}

std::string TextColourOn(const std::string& fill) {
  if (fill.size() != 7 || fill[0] != '#') return "#000000";
  const long v = std::strtol(fill.c_str() + 1, nullptr, 16);
  const double r = (v >> 16) & 0xff, g = (v >> 8) & 0xff, b = v & 0xff;
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? "#000000" : "#ffffff";
}

std::vector<Tick> LogTicks(double lo, double hi, std::string (*format)(double)) {
  std::vector<Tick> ticks;
  if (!(lo > 0) || !(hi >= lo)) return ticks;
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= std::ceil(std::log10(hi)); ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back({v, format(v)});
    }
  }
  return ticks;
}

std::vector<Tick> LinearTicks(double hi, int n, std::string (*format)(double)) {
  if (!(hi > 0)) hi = 1;
  const double raw = hi / std::max(n, 1);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  }
  std::vector<Tick> ticks;
  for (int i = 0;; ++i) {
    const double v = step * i;
    ticks.push_back({v, format(v)});
    if (v >= hi * (1 - 1e-9)) break;
  }
  return ticks;
}

std::string FormatCompact(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  if (a == 0) return "0";
  return fmt::format("{:.3g}", v);
}

std::string FormatTick(double v) { return fmt::format("{:.6g}", v); }

std::string FormatPercent(double v) {
  if (!std::isfinite(v)) return "-";
  if (v < 0.05) return "0%";
  if (v < 10) return fmt::format("{:.1f}%", v);
  return fmt::format("{:.0f}%", v);
}

std::string FormatSize(double bytes) {
  static const char* kUnits[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  const bool whole = std::fabs(bytes - std::round(bytes)) < 1e-9;
  return whole ? fmt::format("{:.0f}{}", bytes, kUnits[u])
               : fmt::format("{:.1f}{}", bytes, kUnits[u]);
}

std::string FormatGridValue(int64_t v) {
  if (v >= 1024 && v % 1024 == 0) return fmt::format("{}K", v / 1024);
  return fmt::format("{}", v);
}

}  // namespace sightline::svg
