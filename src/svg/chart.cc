#include "svg/chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace sightline::svg {
namespace {

constexpr int kWidth = 720, kHeight = 220;
constexpr int kLeft = 64, kRight = 12, kTop = 12, kBottom = 28;

// Frame, horizontal grid lines with y labels, and x labels at both ends.
void Axes(std::string& out, double y_max, const AxisFormat& y_format, double x_min, double x_max,
          const AxisFormat& x_format, bool x_ends = true) {
  const int plot_h = kHeight - kTop - kBottom;
  for (int i = 0; i <= 4; ++i) {
    const double y = kTop + plot_h * (1.0 - i / 4.0);
    fmt::format_to(std::back_inserter(out),
                   "<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>"
                   "<text class=\"yl\" x=\"{}\" y=\"{:.1f}\">{}</text>",
                   kLeft, y, kWidth - kRight, y, kLeft - 6, y + 4,
                   XmlEscape(y_format(y_max * i / 4.0)));
  }
  if (!x_ends) return;
  fmt::format_to(std::back_inserter(out),
                 "<text class=\"xl\" x=\"{}\" y=\"{}\">{}</text>"
                 "<text class=\"xl end\" x=\"{}\" y=\"{}\">{}</text>",
                 kLeft, kHeight - 8, XmlEscape(x_format(x_min)), kWidth - kRight, kHeight - 8,
                 XmlEscape(x_format(x_max)));
}

std::string Open(const std::string& title, int height) {
  return fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>",
      kWidth, height, XmlEscape(title));
}

// The plot area of a chart over time buckets, shared by the step chart (utilization) and the
// lines chart (GPU metrics) so that charts of one trace line up: x from the first bucket's start
// to one step past the last one's, y from 0 to `ymax`.
struct BucketFrame {
  double x0 = 0, x1 = 1, ymax = 1;
  static constexpr int kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
  double px(double x) const { return kLeft + kPlotW * (x - x0) / (x1 - x0); }
  double py(double y) const { return kTop + kPlotH * (1.0 - std::clamp(y / ymax, 0.0, 1.0)); }
};

BucketFrame FrameOf(std::span<const double> x, size_t n, double ymax) {
  BucketFrame f;
  f.x0 = x.front();
  f.x1 = x[n - 1] + (n > 1 ? x[n - 1] - x[n - 2] : 1.0);
  if (f.x1 <= f.x0) f.x1 = f.x0 + 1;
  f.ymax = ymax;
  return f;
}

// Vertical marker lines (iteration starts) inside the frame.
void DrawMarkers(std::string& out, const BucketFrame& f, const std::vector<Marker>& markers) {
  for (const Marker& m : markers) {
    if (m.x < f.x0 || m.x > f.x1) continue;
    fmt::format_to(std::back_inserter(out),
                   "<line class=\"marker\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\">"
                   "<title>{3}</title></line>",
                   f.px(m.x), kTop, kTop + BucketFrame::kPlotH, XmlEscape(m.label));
  }
}

}  // namespace

std::string StepChartSvg(const XYChart& series, const std::vector<Marker>& markers, double y_max) {
  if (series.x.empty()) return "";
  const size_t n = std::min(series.x.size(), series.y.size());
  const bool two = series.y2.size() >= n;
  double data_max = 0;
  for (size_t i = 0; i < n; ++i) {
    data_max = std::max(data_max, series.y[i]);
    if (two) data_max = std::max(data_max, series.y2[i]);
  }
  const BucketFrame f = FrameOf(series.x, n, y_max > 0 ? y_max : NiceMax(data_max));
  const double x0 = f.x0, x1 = f.x1;
  const int plot_h = BucketFrame::kPlotH;
  auto px = [&f](double x) { return f.px(x); };
  auto py = [&f](double y) { return f.py(y); };
  std::string out = Open(series.title, kHeight);
  Axes(out, f.ymax, series.y_format, x0, x1, series.x_format);
  DrawMarkers(out, f, markers);
  // A step line: each bucket holds its value until the next one starts.
  std::string path, area;
  for (size_t i = 0; i < n; ++i) {
    const double xa = px(series.x[i]);
    const double xb = px(i + 1 < n ? series.x[i + 1] : x1);
    const double y = py(series.y[i]);
    fmt::format_to(std::back_inserter(path), "{}{:.1f},{:.1f}H{:.1f}", i == 0 ? "M" : "L", xa, y,
                   xb);
  }
  area = path + fmt::format("V{}H{}Z", kTop + plot_h, kLeft);
  if (two) {  // the second line behind the first, dashed (e.g. reserved beside allocated)
    std::string path2;
    for (size_t i = 0; i < n; ++i) {
      fmt::format_to(std::back_inserter(path2), "{}{:.1f},{:.1f}H{:.1f}", i == 0 ? "M" : "L",
                     px(series.x[i]), py(series.y2[i]), px(i + 1 < n ? series.x[i + 1] : x1));
    }
    fmt::format_to(std::back_inserter(out),
                   "<path class=\"line2\" d=\"{}\" fill=\"none\" stroke=\"#d62728\" "
                   "stroke-dasharray=\"4 3\"><title>{}</title></path>",
                   path2, XmlEscape(series.y2_label));
  }
  fmt::format_to(std::back_inserter(out),
                 "<path class=\"area\" d=\"{}\"/><path class=\"line\" d=\"{}\"/>", area, path);
  for (const ChartMark& mark : series.marks) {  // a dot with its label, e.g. the peak
    if (mark.x < x0 || mark.x > x1) continue;
    const double mx = px(mark.x), my = py(mark.y);
    fmt::format_to(std::back_inserter(out),
                   "<circle class=\"mark\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#d62728\">"
                   "<title>{}</title></circle><text class=\"mk\" style=\"font-size:10px\" "
                   "x=\"{:.1f}\" y=\"{:.1f}\" "
                   "text-anchor=\"{}\">{}</text>",
                   mx, my, XmlEscape(mark.label), mx + (mx > kWidth / 2 ? -6 : 6),
                   std::max<double>(kTop + 10, my - 6), mx > kWidth / 2 ? "end" : "start",
                   XmlEscape(mark.label));
  }
  if (!series.y2_label.empty() || !series.y_label.empty()) {  // a legend, top left
    fmt::format_to(std::back_inserter(out),
                   "<text class=\"mk\" style=\"font-size:10px\" x=\"{}\" y=\"{}\">— {}</text>",
                   kLeft + 6, kTop + 12, XmlEscape(series.y_label));
    if (two) {
      fmt::format_to(std::back_inserter(out),
                     "<text class=\"mk\" style=\"font-size:10px;fill:#d62728\" x=\"{}\" "
                     "y=\"{}\">- - {}</text>",
                     kLeft + 6, kTop + 26, XmlEscape(series.y2_label));
    }
  }
  out += "</svg>";
  return out;
}

// Colours of the lines of one chart, in order (Tableau 10 without its orange, which the iteration
// markers use).
constexpr const char* kLineColours[] = {"#4e79a7", "#e15759", "#59a14f", "#b07aa1",
                                        "#76b7b2", "#edc948", "#9c755f", "#bab0ac"};

std::string LinesChartSvg(const XYChart& series, const std::vector<Marker>& markers, double y_max) {
  const size_t n = series.x.size();
  if (n == 0 || series.lines.empty()) return "";
  double data_max = 0;
  for (const ChartLine& l : series.lines) {
    for (size_t i = 0; i < n && i < l.y.size(); ++i) {
      if (std::isfinite(l.y[i])) data_max = std::max(data_max, l.y[i]);
      if (i < l.band_max.size() && std::isfinite(l.band_max[i])) {
        data_max = std::max(data_max, l.band_max[i]);
      }
    }
  }
  // The step chart's frame (the utilization chart above it), so that the two line up; the legend
  // goes in rows under the x labels.
  const BucketFrame f = FrameOf(series.x, n, y_max > 0 ? y_max : NiceMax(data_max));
  const double x0 = f.x0, x1 = f.x1, ymax = f.ymax;
  auto px = [&f](double x) { return f.px(x); };
  auto py = [&f](double y) { return f.py(y); };
  auto x_end = [&](size_t i) { return px(i + 1 < n ? series.x[i + 1] : x1); };
  // Legend rows: items left to right (about 6 px per character), wrapping at the right edge.
  struct Item {
    double x;
    int row;
  };
  std::vector<Item> items;
  double lx = kLeft;
  int row = 0;
  for (const ChartLine& l : series.lines) {
    const double w = 28 + 6.2 * static_cast<double>(l.label.size()) + 14;
    if (lx + w > kWidth - kRight && lx > kLeft) lx = kLeft, ++row;
    items.push_back({lx, row});
    lx += w;
  }
  const int height = kHeight + 6 + 16 * (row + 1);
  std::string out = Open(series.title, height);
  Axes(out, ymax, series.y_format, x0, x1, series.x_format);
  DrawMarkers(out, f, markers);
  auto has = [](std::span<const double> v, size_t i) {
    return i < v.size() && std::isfinite(v[i]);
  };
  for (size_t li = 0; li < series.lines.size(); ++li) {
    const ChartLine& l = series.lines[li];
    const char* colour = kLineColours[li % std::size(kLineColours)];
    // The band: from the mean up to the largest sample, over each run of buckets with data.
    std::string band;
    for (size_t i = 0; i < n;) {
      if (!has(l.y, i) || !has(l.band_max, i)) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < n && has(l.y, j) && has(l.band_max, j)) ++j;
      fmt::format_to(std::back_inserter(band), "M{:.1f},{:.1f}", px(series.x[i]),
                     py(l.band_max[i]));
      for (size_t k = i; k < j; ++k) {
        if (k > i) fmt::format_to(std::back_inserter(band), "V{:.1f}", py(l.band_max[k]));
        fmt::format_to(std::back_inserter(band), "H{:.1f}", x_end(k));
      }
      for (size_t k = j; k-- > i;) {
        fmt::format_to(std::back_inserter(band), "V{:.1f}H{:.1f}", py(l.y[k]), px(series.x[k]));
      }
      band += "Z";
      i = j;
    }
    // The mean as a step line, broken where a bucket has no sample (a gap, not a zero).
    std::string path;
    bool open = false;
    for (size_t i = 0; i < n; ++i) {
      if (!has(l.y, i)) {
        open = false;
        continue;
      }
      if (open) {
        fmt::format_to(std::back_inserter(path), "V{:.1f}H{:.1f}", py(l.y[i]), x_end(i));
      } else {
        fmt::format_to(std::back_inserter(path), "M{:.1f},{:.1f}H{:.1f}", px(series.x[i]),
                       py(l.y[i]), x_end(i));
      }
      open = true;
    }
    if (!band.empty()) {
      fmt::format_to(std::back_inserter(out),
                     "<path class=\"band\" d=\"{}\" fill=\"{}\" fill-opacity=\"0.18\">"
                     "<title>{}: largest sample in each bucket</title></path>",
                     band, colour, XmlEscape(l.label));
    }
    if (!path.empty()) {
      fmt::format_to(std::back_inserter(out),
                     "<path class=\"mline\" d=\"{}\" fill=\"none\" stroke=\"{}\" "
                     "stroke-width=\"1.5\"><title>{}: mean of each bucket</title></path>",
                     path, colour, XmlEscape(l.label));
    }
    const double ly = kHeight + 14 + 16 * items[li].row;
    fmt::format_to(std::back_inserter(out),
                   "<g class=\"legend\"><rect x=\"{0:.1f}\" y=\"{1:.1f}\" width=\"22\" "
                   "height=\"10\" fill=\"{2}\" fill-opacity=\"0.18\"/><line x1=\"{0:.1f}\" "
                   "y1=\"{3:.1f}\" x2=\"{4:.1f}\" y2=\"{3:.1f}\" stroke=\"{2}\" "
                   "stroke-width=\"2\"/><text x=\"{5:.1f}\" y=\"{6:.1f}\">{7}</text></g>",
                   items[li].x, ly - 9, colour, ly - 1, items[li].x + 22, items[li].x + 28, ly,
                   XmlEscape(l.label));
  }
  out += "</svg>";
  return out;
}

std::string CdfChartSvg(const XYChart& series) {
  const size_t n = std::min(series.x.size(), series.y.size());
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < n; ++i) {
    if (series.x[i] > 0) lo = std::min(lo, series.x[i]), hi = std::max(hi, series.x[i]);
  }
  if (!(hi > 0) || !std::isfinite(lo)) return "";
  // A log x axis when the values span more than a decade: latency tails are long, and on a linear
  // axis the body of the distribution collapses against the left edge.
  const bool log_x = hi / lo > 10;
  double x0 = log_x ? std::log10(lo) : 0, x1 = log_x ? std::log10(hi) : hi;
  if (x1 <= x0) x1 = x0 + 1;
  const int plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double x) {
    const double v = log_x ? std::log10(std::max(x, lo)) : x;
    return kLeft + plot_w * (v - x0) / (x1 - x0);
  };
  auto py = [&](double y) { return kTop + plot_h * (1.0 - std::clamp(y / 100.0, 0.0, 1.0)); };
  std::string out = Open(series.title, kHeight);
  Axes(out, 100.0, series.y_format, 0, 0, series.x_format, /*x_ends=*/false);
  // x labels: each power of ten inside the range (log), or the ends (linear).
  std::vector<double> ticks;
  if (log_x) {
    for (double d = std::ceil(x0); d <= x1 + 1e-9; d += 1) ticks.push_back(std::pow(10.0, d));
  }
  if (ticks.size() < 2) ticks = {log_x ? lo : 0.0, hi};
  for (double t : ticks) {
    fmt::format_to(std::back_inserter(out),
                   "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
                   "<text class=\"xl mid\" x=\"{0:.1f}\" y=\"{3}\">{4}</text>",
                   px(t), kTop, kTop + plot_h, kHeight - 8, XmlEscape(series.x_format(t)));
  }
  // p50, p90, p99: dashed guides with the value where the curve crosses them.
  for (double level : {50.0, 90.0, 99.0}) {
    for (size_t i = 0; i < n; ++i) {
      if (series.y[i] != level) continue;
      fmt::format_to(std::back_inserter(out),
                     "<line class=\"marker\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" "
                     "y2=\"{1:.1f}\"><title>p{3:g} {4}</title></line>",
                     kLeft, py(level), px(series.x[i]), level,
                     XmlEscape(series.x_format(series.x[i])));
    }
  }
  std::string path;
  for (size_t i = 0; i < n; ++i) {
    const double x = px(series.x[i]), y = py(series.y[i]);
    if (i == 0) {
      fmt::format_to(std::back_inserter(path), "M{:.1f},{:.1f}", x, py(0));
    } else {
      fmt::format_to(std::back_inserter(path), "H{:.1f}", x);  // flat until the next value
    }
    fmt::format_to(std::back_inserter(path), "V{:.1f}", y);
  }
  fmt::format_to(std::back_inserter(out), "<path class=\"line\" d=\"{}\"/></svg>", path);
  return out;
}

std::string ColumnChartSvg(const XYChart& series) {
  const size_t n = std::min(series.x.size(), series.y.size());
  if (n == 0) return "";
  double data_max = 0;
  for (size_t i = 0; i < n; ++i) data_max = std::max(data_max, series.y[i]);
  const double ymax = NiceMax(data_max);
  const int plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  std::string out = Open(series.title, kHeight);
  // Few columns (e.g. a histogram's buckets): a label under each; many: the ends only.
  const bool label_each = n <= 16;
  Axes(out, ymax, series.y_format, series.x.front(), series.x[n - 1], series.x_format, !label_each);
  const double step = static_cast<double>(plot_w) / static_cast<double>(n);
  if (label_each) {
    for (size_t i = 0; i < n; ++i) {
      fmt::format_to(
          std::back_inserter(out), "<text class=\"xl mid\" x=\"{:.1f}\" y=\"{}\">{}</text>",
          kLeft + step * (i + 0.5), kHeight - 8, XmlEscape(series.x_format(series.x[i])));
    }
  }
  const double w = std::max(step * 0.8, 0.5);
  for (size_t i = 0; i < n; ++i) {
    const double h = plot_h * std::clamp(series.y[i] / ymax, 0.0, 1.0);
    fmt::format_to(std::back_inserter(out),
                   "<rect class=\"col\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" "
                   "height=\"{:.1f}\"><title>{}: {}</title></rect>",
                   kLeft + step * i + (step - w) / 2, kTop + plot_h - h, w, h,
                   XmlEscape(series.x_format(series.x[i])),
                   XmlEscape(series.y_format(series.y[i])));
  }
  out += "</svg>";
  return out;
}

std::string BarChartSvg(const std::vector<Bar>& bars, const AxisFormat& format) {
  if (bars.empty()) return "";
  constexpr int kRow = 22, kLabel = 200, kValue = 90;
  const int height = kTop + static_cast<int>(bars.size()) * kRow + 4;
  double max = 0;
  for (const Bar& b : bars) max = std::max(max, b.value);
  if (max <= 0) max = 1;
  const int plot_w = kWidth - kLabel - kValue - kRight;
  std::string out = Open("bar chart", height);
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = kTop + static_cast<double>(i) * kRow;
    const double w = std::max(plot_w * bars[i].value / max, 1.0);
    std::string label = bars[i].label;
    if (label.size() > 30) label = label.substr(0, 27) + "...";
    fmt::format_to(std::back_inserter(out),
                   "<text class=\"bl\" x=\"{}\" y=\"{:.1f}\">{}</text>"
                   "<rect class=\"bar\" x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\">"
                   "<title>{}: {}</title></rect>"
                   "<text class=\"bv\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
                   kLabel - 6, y + 15, XmlEscape(label), kLabel, y + 3, w, kRow - 6,
                   XmlEscape(bars[i].label), XmlEscape(format(bars[i].value)), kLabel + w + 6,
                   y + 15, XmlEscape(format(bars[i].value)));
  }
  out += "</svg>";
  return out;
}

}  // namespace sightline::svg
