// A stand-alone SVG drawing of a stretch of a timeline (the HTML report's per-thread view of an
// iteration): one lane per row (a GPU, a thread, the GIL, GC), bars over a shared time axis in
// microseconds (milliseconds past 10 ms) from the stretch's start. Offline, no script; each bar has a <title> tooltip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sightline::svg {

struct TimelineBar {
  int64_t start_ns = 0, end_ns = 0;  // clipped to the drawing's [start, end)
  std::string fill = "#4e79a7";
  std::string tooltip;
};

struct TimelineLane {
  std::string label;
  std::vector<TimelineBar> bars;
};

// Lanes top to bottom over [start_ns, end_ns); bars narrower than a pixel still show (one pixel).
std::string TimelineSvg(const std::vector<TimelineLane>& lanes, int64_t start_ns, int64_t end_ns,
                        int width_px = 960);

}  // namespace sightline::svg
