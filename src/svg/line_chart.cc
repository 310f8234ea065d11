#include "svg/line_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/strings.h"

namespace sightline::svg {

std::string LineChartSvg(const LineChart& c) {
  constexpr int kWidth = 760, kHeight = 420, kLeft = 78, kRight = 150, kTop = 52, kBottom = 56;
  const int plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = 0, y_lo = x_lo, y_hi = 0;
  auto usable = [&](double x, double y) {
    return std::isfinite(x) && x > 0 && std::isfinite(y) && (c.log_y ? y > 0 : y >= 0);
  };
  for (const Line& l : c.lines) {
    for (size_t i = 0; i < std::min(l.x.size(), l.y.size()); ++i) {
      if (!usable(l.x[i], l.y[i])) continue;
      x_lo = std::min(x_lo, l.x[i]);
      x_hi = std::max(x_hi, l.x[i]);
      y_lo = std::min(y_lo, l.y[i]);
      y_hi = std::max(y_hi, l.y[i]);
    }
  }
  std::string out;
  Emit(out,
       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
       "{1}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
       "<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
       "<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{2}</text>\n",
       kWidth, kHeight, XmlEscape(c.title));
  if (!c.subtitle.empty()) {
    Emit(out, "<text x=\"8\" y=\"38\" fill=\"#444444\">{}</text>\n", XmlEscape(c.subtitle));
  }
  if (!(x_hi > 0)) {
    Emit(out, "<text x=\"{}\" y=\"{}\">no data</text>\n</svg>\n", kLeft, kTop + 20);
    return out;
  }
  if (x_hi <= x_lo) x_hi = x_lo * 2;
  // y axis: log from a 1-2-5 value below the data to one above it, or linear from 0.
  std::vector<Tick> y_ticks;
  double y_min = 0, y_max = 1;
  if (c.log_y) {
    y_min = std::pow(10.0, std::floor(std::log10(y_lo)));
    y_max = std::pow(10.0, std::ceil(std::log10(y_hi)));
    if (y_max <= y_min) y_max = y_min * 10;
    y_ticks = LogTicks(y_min, y_max, c.y_format);
  } else {
    y_ticks = LinearTicks(y_hi, 5, c.y_format);
    y_max = y_ticks.back().value;
  }
  auto px = [&](double x) {
    return kLeft + plot_w * (std::log2(x) - std::log2(x_lo)) / (std::log2(x_hi) - std::log2(x_lo));
  };
  auto py = [&](double y) {
    const double t =
        c.log_y ? (std::log10(y) - std::log10(y_min)) / (std::log10(y_max) - std::log10(y_min))
                : y / y_max;
    return kTop + plot_h * (1.0 - std::clamp(t, 0.0, 1.0));
  };
  for (const Tick& t : y_ticks) {
    Emit(out,
         "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#dddddd\"/>"
         "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
         kLeft, py(t.value), kLeft + plot_w, kLeft - 6, py(t.value) + 4, XmlEscape(t.label));
  }
  // x ticks at powers of two, every 2^k so that at most about 10 show.
  const int e_lo = static_cast<int>(std::ceil(std::log2(x_lo) - 1e-9));
  const int e_hi = static_cast<int>(std::floor(std::log2(x_hi) + 1e-9));
  const int step = std::max(1, (e_hi - e_lo + 9) / 10);
  for (int e = e_lo; e <= e_hi; e += step) {
    const double x = std::ldexp(1.0, e);
    Emit(out,
         "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eeeeee\"/>"
         "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
         px(x), kTop, kTop + plot_h, kTop + plot_h + 16, XmlEscape(c.x_format(x)));
  }
  Emit(out,
       "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888888\"/>\n",
       kLeft, kTop, plot_w, plot_h);
  Emit(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
       kLeft + plot_w / 2, kTop + plot_h + 38, XmlEscape(c.x_title));
  Emit(out,
       "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" "
       "font-size=\"12\">{}</text>\n",
       kTop + plot_h / 2, XmlEscape(c.y_title));
  int legend_y = kTop + 10;
  for (const Line& l : c.lines) {
    std::string path;
    std::string dots;
    for (size_t i = 0; i < std::min(l.x.size(), l.y.size()); ++i) {
      if (!usable(l.x[i], l.y[i])) continue;
      fmt::format_to(std::back_inserter(path), "{}{:.1f},{:.1f}", path.empty() ? "M" : " L",
                     px(l.x[i]), py(l.y[i]));
      fmt::format_to(std::back_inserter(dots),
                     "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}: {} "
                     "{}</title></circle>",
                     px(l.x[i]), py(l.y[i]), l.colour, XmlEscape(l.label),
                     XmlEscape(c.x_format(l.x[i])), XmlEscape(FormatCompact(l.y[i])));
    }
    if (path.empty()) continue;
    Emit(out, "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>{}\n", path, l.colour,
         dots);
    Emit(out,
         "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"3\"/>"
         "<text x=\"{4}\" y=\"{5}\">{6}</text>\n",
         kLeft + plot_w + 12, legend_y, kLeft + plot_w + 32, l.colour, kLeft + plot_w + 38,
         legend_y + 4, XmlEscape(l.label));
    legend_y += 18;
  }
  Emit(out, "</svg>\n");
  return out;
}

}  // namespace sightline::svg
