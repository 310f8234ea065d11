#include "svg/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "svg/svg_util.h"

namespace sightline::svg {
namespace {

constexpr int kLabelPx = 220;  // the lane names on the left
constexpr int kLanePx = 18;
constexpr int kGapPx = 4;
constexpr int kAxisPx = 22;

}  // namespace

std::string TimelineSvg(const std::vector<TimelineLane>& lanes, int64_t start_ns, int64_t end_ns,
                        int width_px) {
  const int plot = std::max(100, width_px - kLabelPx - 10);
  const double span = static_cast<double>(std::max<int64_t>(1, end_ns - start_ns));
  const int height = kAxisPx + static_cast<int>(lanes.size()) * (kLanePx + kGapPx) + 4;
  std::string out;
  fmt::format_to(std::back_inserter(out),
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                 "font-family=\"sans-serif\" font-size=\"11\">",
                 kLabelPx + plot + 10, height);
  // The axis: µs (ms past 10 ms) from the start, about 6 ticks.
  const bool ms = span >= 1e7;
  const double span_units = span / (ms ? 1e6 : 1e3);
  for (const Tick& t : LinearTicks(span_units, 6, &FormatTick)) {
    if (t.value > span_units * 1.0001) continue;
    const double x = kLabelPx + plot * t.value / span_units;
    fmt::format_to(
        std::back_inserter(out),
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"12\" text-anchor=\"middle\" fill=\"#555\">{3} {4}</text>",
        x, kAxisPx - 6, height, XmlEscape(t.label), ms ? "ms" : "µs");
  }
  int y = kAxisPx;
  for (const TimelineLane& lane : lanes) {
    fmt::format_to(std::back_inserter(out),
                   "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>"
                   "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f6f6f6\"/>",
                   kLabelPx - 6, y + kLanePx - 5, XmlEscape(lane.label), kLabelPx, y, plot,
                   kLanePx);
    for (const TimelineBar& b : lane.bars) {
      const int64_t a = std::max(b.start_ns, start_ns), e = std::min(b.end_ns, end_ns);
      if (e < a) continue;
      const double x = kLabelPx + plot * static_cast<double>(a - start_ns) / span;
      const double w = std::max(1.0, plot * static_cast<double>(e - a) / span);
      fmt::format_to(std::back_inserter(out),
                     "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\">"
                     "<title>{}</title></rect>",
                     x, y + 2, w, kLanePx - 4, XmlEscape(b.fill), XmlEscape(b.tooltip));
    }
    y += kLanePx + kGapPx;
  }
  out += "</svg>";
  return out;
}

}  // namespace sightline::svg
