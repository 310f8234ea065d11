#include "exporters/perfetto_graph_ranges.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

namespace sightline {
namespace {

using Replay = std::pair<int, int64_t>;  // (0 call, 1 correlation, 2 kernel row; the value)

// The slices of one track: those open (one per level, outermost first) and those closed but not
// yet handed out (until no slice is open: then nothing later can start before them).
class TrackSlicer {
 public:
  TrackSlicer(const GraphKernelPaths& paths, const std::function<void(const GraphRangeSlice&)>& out)
      : paths_(paths), out_(out) {}

  void Start(int32_t track, int32_t device, int32_t stream) {
    track_ = track;
    device_ = device;
    stream_ = stream;
    replay_ = {-1, 0};
  }

  // One graph kernel, in GPU start order; path < 0: it has no ranges.
  void Add(const Replay& replay, PathSource source, int32_t path, TimeNs start_ns, TimeNs end_ns) {
    size_t common = 0;
    size_t levels = 0;
    if (path >= 0) {
      const std::vector<std::string_view>& names = paths_.components[path];
      levels = std::min<size_t>(names.size(), kMaxGraphRangeLevels);
      if (replay == replay_ && source == source_) {
        while (common < open_.size() && common < levels &&
               paths_.components[open_[common].path][common] == names[common]) {
          ++common;
        }
      }
    }
    CloseTo(common, start_ns);
    replay_ = replay;
    source_ = source;
    for (size_t d = open_.size(); d < levels; ++d) {
      GraphRangeSlice s;
      s.track = track_;
      s.device = device_;
      s.stream = stream_;
      s.start_ns = start_ns;
      s.end_ns = start_ns;
      s.depth = static_cast<int32_t>(d);
      s.path = path;
      s.source = source;
      open_.push_back(s);
    }
    for (GraphRangeSlice& s : open_) {
      s.end_ns = std::max(s.end_ns, end_ns);
      ++s.kernels;
    }
  }

  void Finish() { CloseTo(0, std::numeric_limits<TimeNs>::max()); }

 private:
  // Closes the slices below `levels` at `at` (the next kernel's start).
  void CloseTo(size_t levels, TimeNs at) {
    while (open_.size() > levels) {
      GraphRangeSlice s = open_.back();
      open_.pop_back();
      if (s.end_ns > at) {
        s.end_ns = at;
        s.clipped = true;
      }
      closed_.push_back(s);
    }
    if (!open_.empty()) return;
    std::sort(closed_.begin(), closed_.end(),
              [](const GraphRangeSlice& a, const GraphRangeSlice& b) {
                return std::tie(a.start_ns, a.depth) < std::tie(b.start_ns, b.depth);
              });
    for (const GraphRangeSlice& s : closed_) out_(s);
    closed_.clear();
  }

  const GraphKernelPaths& paths_;
  const std::function<void(const GraphRangeSlice&)>& out_;
  int32_t track_ = 0, device_ = 0, stream_ = 0;
  Replay replay_ = {-1, 0};
  PathSource source_ = PathSource::kNone;
  std::vector<GraphRangeSlice> open_;
  std::vector<GraphRangeSlice> closed_;
};

}  // namespace

void ForEachGraphRangeSlice(const Trace& trace, const GraphKernelPaths& paths,
                            const std::function<void(int32_t, int32_t, int32_t)>& on_track,
                            const std::function<void(const GraphRangeSlice&)>& on_slice) {
  if (paths.source.empty()) return;
  const KernelTable& k = trace.kernels;
  // The graph kernels by (device, stream, start); streams none of whose kernels has ranges get
  // no track.
  std::vector<int32_t> rows;
  for (size_t i = 0; i < k.size(); ++i) {
    if (paths.graph[i]) rows.push_back(static_cast<int32_t>(i));
  }
  std::sort(rows.begin(), rows.end(), [&](int32_t a, int32_t b) {
    return std::tie(k.device[a], k.stream[a], k.start_ns[a], a) <
           std::tie(k.device[b], k.stream[b], k.start_ns[b], b);
  });
  auto has_ranges = [&](int32_t row) {
    return paths.path[row] >= 0 && !paths.components[paths.path[row]].empty();
  };
  TrackSlicer slicer(paths, on_slice);
  int32_t tracks = 0;
  for (size_t b = 0; b < rows.size();) {
    size_t e = b;
    bool any = false;
    while (e < rows.size() && k.device[rows[e]] == k.device[rows[b]] &&
           k.stream[rows[e]] == k.stream[rows[b]]) {
      any = any || has_ranges(rows[e]);
      ++e;
    }
    if (any) {
      on_track(tracks, k.device[rows[b]], k.stream[rows[b]]);
      slicer.Start(tracks++, k.device[rows[b]], k.stream[rows[b]]);
      for (size_t j = b; j < e; ++j) {
        const int32_t row = rows[j];
        // A replay: the kernels of one launching call (or correlation id); a kernel with
        // neither is a replay of its own.
        const Replay replay = k.launch_call[row] != kNoRow ? Replay{0, k.launch_call[row]}
                              : k.correlation[row] >= 0    ? Replay{1, k.correlation[row]}
                                                           : Replay{2, row};
        slicer.Add(replay, paths.source[row], has_ranges(row) ? paths.path[row] : -1,
                   k.start_ns[row], k.end_ns[row]);
      }
      slicer.Finish();
    }
    b = e;
  }
}

}  // namespace sightline
