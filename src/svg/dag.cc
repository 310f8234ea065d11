#include "svg/dag.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "svg/svg_util.h"

namespace sightline::svg {
namespace {

constexpr double kBoxWidth = 250, kBoxHeight = 38, kPillHeight = 22;
constexpr double kGapX = 24, kGapY = 30, kMargin = 12;
// Edges that skip layers go around the right side of the boxes, bulging by their span.
constexpr double kSkipBulge = 28, kSkipPerLayer = 8, kSkipMaxBulge = 150;
constexpr size_t kLabelChars = 38, kDetailChars = 44;

std::string Shorten(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  const size_t head = n * 2 / 3, tail = n - head - 3;
  return s.substr(0, head) + "..." + s.substr(s.size() - tail);
}

}  // namespace

std::string DagSvg(const std::vector<DagNode>& nodes, const std::vector<DagEdge>& edges) {
  const int n = static_cast<int>(nodes.size());
  if (n == 0) return {};
  std::vector<std::vector<int>> parents(n);
  for (const DagEdge& e : edges) {
    if (e.from >= 0 && e.to < n && e.from < e.to) parents[e.to].push_back(e.from);
  }
  // Layer: one below the deepest predecessor.
  std::vector<int> layer(n, 0);
  int layers = 1;
  for (int i = 0; i < n; ++i) {
    for (int p : parents[i]) layer[i] = std::max(layer[i], layer[p] + 1);
    layers = std::max(layers, layer[i] + 1);
  }
  // Within a layer, order by the mean slot of the predecessors (one barycentre pass), then index.
  std::vector<std::vector<int>> rows(layers);
  std::vector<double> slot(n, 0);
  for (int i = 0; i < n; ++i) rows[layer[i]].push_back(i);
  size_t widest = 1;
  for (std::vector<int>& row : rows) {
    std::vector<std::pair<double, int>> keyed;
    for (int i : row) {
      double sum = 0;
      for (int p : parents[i]) sum += slot[p];
      keyed.push_back({parents[i].empty() ? 0.0 : sum / parents[i].size(), i});
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    row.clear();
    for (size_t k = 0; k < keyed.size(); ++k) {
      row.push_back(keyed[k].second);
      slot[keyed[k].second] = static_cast<double>(k) - (keyed.size() - 1) / 2.0;
    }
    widest = std::max(widest, row.size());
  }
  const double width = 2 * kMargin + widest * kBoxWidth + (widest - 1) * kGapX + kSkipMaxBulge;
  const double height = 2 * kMargin + layers * kBoxHeight + (layers - 1) * kGapY;
  std::vector<double> cx(n), top(n), h(n);
  for (int l = 0; l < layers; ++l) {
    const std::vector<int>& row = rows[l];
    const double row_width = row.size() * kBoxWidth + (row.size() - 1) * kGapX;
    double x = (width - kSkipMaxBulge - row_width) / 2 + kBoxWidth / 2;
    for (int i : row) {
      h[i] = nodes[i].terminal ? kPillHeight : kBoxHeight;
      cx[i] = x;
      top[i] = kMargin + l * (kBoxHeight + kGapY) + (kBoxHeight - h[i]) / 2;
      x += kBoxWidth + kGapX;
    }
  }
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"dag\" width=\"{:.0f}\" "
                 "height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\">"
                 "<defs><marker id=\"dag-arrow\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" "
                 "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 "
                 "z\" fill=\"#6b7280\"/></marker></defs>",
                 width, height, width, height);
  for (const DagEdge& e : edges) {
    if (e.from < 0 || e.to >= n || e.from >= e.to) continue;
    const int span = layer[e.to] - layer[e.from];
    if (span > 1) {
      const double x1 = cx[e.from] + kBoxWidth / 2, y1 = top[e.from] + h[e.from] / 2;
      const double x2 = cx[e.to] + kBoxWidth / 2, y2 = top[e.to] + h[e.to] / 2;
      const double bulge = std::min(kSkipMaxBulge - 4, kSkipBulge + kSkipPerLayer * span);
      fmt::format_to(it,
                     "<path d=\"M{:.1f},{:.1f} C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" "
                     "fill=\"none\" stroke=\"#2563eb\" stroke-width=\"1.2\" "
                     "marker-end=\"url(#dag-arrow)\"/>",
                     x1, y1, x1 + bulge, y1, x2 + bulge, y2, x2 + 1, y2);
      continue;
    }
    const double x1 = cx[e.from], y1 = top[e.from] + h[e.from];
    const double x2 = cx[e.to], y2 = top[e.to];
    const double mid = (y1 + y2) / 2;
    fmt::format_to(it,
                   "<path d=\"M{:.1f},{:.1f} C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" "
                   "fill=\"none\" stroke=\"#6b7280\" stroke-width=\"1.2\" "
                   "marker-end=\"url(#dag-arrow)\"/>",
                   x1, y1, x1, mid, x2, mid, x2, y2 - 1);
  }
  for (int i = 0; i < n; ++i) {
    const DagNode& d = nodes[i];
    const std::string ink = TextColourOn(d.fill);
    const double x = cx[i] - kBoxWidth / 2;
    fmt::format_to(it, "<g class=\"node\"><title>{}</title>",
                   XmlEscape(d.tooltip.empty() ? d.label : d.tooltip));
    if (d.terminal) {
      fmt::format_to(it,
                     "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" "
                     "rx=\"11\" fill=\"#e5e7eb\" stroke=\"#6b7280\"/><text x=\"{:.1f}\" "
                     "y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text></g>",
                     x, top[i], kBoxWidth, h[i], cx[i], top[i] + 15,
                     XmlEscape(Shorten(d.label, kLabelChars)));
      continue;
    }
    fmt::format_to(it,
                   "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" rx=\"4\" "
                   "fill=\"{}\" stroke=\"#374151\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
                   "font-size=\"11\" text-anchor=\"middle\" fill=\"{}\">{}</text><text "
                   "x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\" "
                   "fill=\"{}\">{}</text></g>",
                   x, top[i], kBoxWidth, h[i], XmlEscape(d.fill), cx[i], top[i] + 15, ink,
                   XmlEscape(Shorten(d.label, kLabelChars)), cx[i], top[i] + 30, ink,
                   XmlEscape(Shorten(d.detail, kDetailChars)));
  }
  out += "</svg>";
  return out;
}

}  // namespace sightline::svg
