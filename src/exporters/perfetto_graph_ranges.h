// The Perfetto export's graph range tracks (docs/formats/perfetto.md, "CUDA graph kernels"): per
// GPU stream that ran graph kernels attributed to host ranges, slices named after those ranges
// (layer_3 at one level, attention below it), each spanning the consecutive kernels of one replay
// that were captured in (or aligned with) that range. Computed here, written by perfetto_json.cc.
#pragma once

#include <cstdint>
#include <functional>

#include "base/time_units.h"
#include "facts/graph_kernel_paths.h"
#include "model/trace.h"

namespace sightline {

struct GraphRangeSlice {
  int32_t track = 0;  // index of its (device, stream) track, in (device, stream) order
  int32_t device = 0, stream = 0;
  TimeNs start_ns = 0, end_ns = 0;
  int32_t depth = 0;  // 0: outermost range; the slice is components[path][depth]
  int32_t path = -1;  // index into GraphKernelPaths::paths of the kernel that opened it
  int64_t kernels = 0;
  PathSource source = PathSource::kNone;
  // Ends at the next slice's start instead of its last kernel's end: kernels of different ranges
  // overlapped on the stream, and slices on one track must nest.
  bool clipped = false;
};

// Paths deeper than this are cut to their outermost levels on the tracks (the kernel args keep
// the whole path).
inline constexpr int32_t kMaxGraphRangeLevels = 32;

// Grouping: per (device, stream), the graph kernels in GPU start order; consecutive kernels of
// the same replay (launching call or correlation) and the same attribution share the slices of
// their common path prefix. A graph kernel without ranges (or another replay) closes all open
// slices. on_track(track, device, stream) comes before the track's slices; slices come parents
// first among those with the same start. Cost: O(graph kernels x levels + sort).
void ForEachGraphRangeSlice(const Trace& trace, const GraphKernelPaths& paths,
                            const std::function<void(int32_t, int32_t, int32_t)>& on_track,
                            const std::function<void(const GraphRangeSlice&)>& on_slice);

}  // namespace sightline
