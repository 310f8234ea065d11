#include "svg/heatmap.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"

namespace sightline::svg {

std::string HeatmapSvg(const Heatmap& m) {
  constexpr int kCellW = 58, kLeft = 92, kTop = 52, kRight = 16;
  const bool two_lines =
      std::any_of(m.cells.begin(), m.cells.end(), [](const HeatCell& c) { return !c.sub.empty(); });
  const int cell_h = two_lines ? 34 : 26;
  const int ncols = static_cast<int>(m.columns.size()), nrows = static_cast<int>(m.rows.size());
  const int grid_w = kCellW * ncols, grid_h = cell_h * nrows;
  const int legend_top = kTop + grid_h + 48;
  const int bar_w = std::min(std::max(grid_w, 240), 420);
  int legend_w = kLeft + bar_w + 18 + 7 * static_cast<int>(m.bar.label.size());
  if (!m.legend.empty()) {
    legend_w = kLeft;
    for (const LegendItem& item : m.legend)
      legend_w += 30 + 7 * static_cast<int>(item.label.size());
  }
  const int title_w = 16 + 9 * static_cast<int>(m.title.size());
  const int width = std::max(
      {kLeft + grid_w + kRight, legend_w, title_w, 16 + 6 * static_cast<int>(m.subtitle.size())});
  const int height = legend_top + 44;
  std::string out;
  Emit(out,
       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
       "{1}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
       "<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
       width, height, XmlEscape(m.title));
  Emit(out, "<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", 8,
       XmlEscape(m.title));
  if (!m.subtitle.empty()) {
    Emit(out, "<text x=\"8\" y=\"38\" font-size=\"11\" fill=\"#444444\">{}</text>\n",
         XmlEscape(m.subtitle));
  }
  // Cells.
  for (int r = 0; r < nrows; ++r) {
    for (int c = 0; c < ncols; ++c) {
      const size_t i = static_cast<size_t>(r) * ncols + c;
      const HeatCell cell = i < m.cells.size() ? m.cells[i] : HeatCell{};
      const int x = kLeft + c * kCellW, y = kTop + r * cell_h;
      const std::string fill = cell.present ? cell.fill : "#e6e6e6";
      Emit(out,
           "<g><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
           "stroke=\"#ffffff\" stroke-width=\"1\"/>",
           XmlEscape(cell.present ? cell.tooltip : "not measured"), x, y, kCellW, cell_h, fill);
      const std::string ink = cell.present ? TextColourOn(fill) : "#777777";
      const std::string text = cell.present ? cell.text : "-";
      if (cell.sub.empty() || !cell.present) {
        Emit(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
             x + kCellW / 2, y + cell_h / 2 + 4, ink, XmlEscape(text));
      } else {
        Emit(out,
             "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" fill=\"{2}\">{3}</text>"
             "<text x=\"{0}\" y=\"{4}\" text-anchor=\"middle\" fill=\"{2}\" font-size=\"9\">{5}"
             "</text>",
             x + kCellW / 2, y + 14, ink, XmlEscape(text), y + 27, XmlEscape(cell.sub));
      }
      if (cell.present && cell.outline) {
        Emit(out,
             "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#000000\" "
             "stroke-width=\"2\"/>",
             x + 1.5, y + 1.5, kCellW - 3, cell_h - 3);
      }
      Emit(out, "</g>\n");
    }
  }
  // Axis labels and titles.
  for (int r = 0; r < nrows; ++r) {
    Emit(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
         kTop + r * cell_h + cell_h / 2 + 4, XmlEscape(m.rows[r]));
  }
  for (int c = 0; c < ncols; ++c) {
    Emit(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
         kLeft + c * kCellW + kCellW / 2, kTop + grid_h + 14, XmlEscape(m.columns[c]));
  }
  Emit(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
       kLeft + grid_w / 2, kTop + grid_h + 32, XmlEscape(m.x_title));
  Emit(out,
       "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" "
       "font-size=\"12\">{}</text>\n",
       kTop + grid_h / 2, XmlEscape(m.y_title));
  // Legend.
  if (!m.legend.empty()) {
    int x = kLeft;
    for (const LegendItem& item : m.legend) {
      Emit(out,
           "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>"
           "<text x=\"{}\" y=\"{}\">{}</text>\n",
           x, legend_top, item.colour, x + 19, legend_top + 11, XmlEscape(item.label));
      x += 30 + 7 * static_cast<int>(item.label.size());
    }
  } else if (!m.bar.stops.empty()) {
    Emit(out, "<defs><linearGradient id=\"bar\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">");
    const size_t n = m.bar.stops.size();
    for (size_t i = 0; i < n; ++i) {
      Emit(out, "<stop offset=\"{:.3f}\" stop-color=\"{}\"/>", n > 1 ? double(i) / (n - 1) : 0.0,
           m.bar.stops[i]);
    }
    Emit(out, "</linearGradient></defs>\n");
    Emit(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" fill=\"url(#bar)\"/>\n", kLeft,
         legend_top, bar_w);
    for (const auto& [pos, label] : m.bar.ticks) {
      const double x = kLeft + pos * bar_w;
      Emit(out,
           "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333333\"/>"
           "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"10\">{4}</text>\n",
           x, legend_top + 12, legend_top + 16, legend_top + 27, XmlEscape(label));
    }
    Emit(out, "<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n", kLeft + bar_w + 10,
         legend_top + 10, XmlEscape(m.bar.label));
  }
  Emit(out, "</svg>\n");
  return out;
}

}  // namespace sightline::svg
