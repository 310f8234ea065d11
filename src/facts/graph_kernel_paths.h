// Per graph kernel, the host ranges that say what it is: those open when its graph node was
// captured, or, for a kernel without a capture point, those around its eager counterpart
// (graph_alignment.h). One definition for the cuda_graphs section (docs/analyses/cuda_graphs.md)
// and the Perfetto export's graph range tracks (docs/formats/perfetto.md).
// Input: one Trace. Output: per kernel row, how it was attributed and an index into the distinct
// range paths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/string_pool.h"
#include "facts/graph_alignment.h"
#include "model/trace.h"

namespace sightline {

// The ranges a path is made of: NVTX (push/pop, start/end) and PyTorch annotations; CPU ops and
// Python functions are not the program's own marks.
bool IsCaptureRangeKind(RangeKind kind);

enum class PathSource : uint8_t {
  kNone,     // not a graph kernel, or a graph kernel neither captured nor aligned
  kCapture,  // the ranges open on the capturing thread when its node was created
  kAligned,  // the ranges around its eager counterpart, less those holding the whole eager run
};
const char* PathSourceName(PathSource source);  // "none", "capture", "aligned"

struct GraphKernelPaths {
  std::vector<uint8_t> graph;      // per kernel row: GraphKernelRows(trace)
  std::vector<PathSource> source;  // per kernel row
  std::vector<int32_t> path;       // per kernel row: index into `paths`; -1 when kNone
  std::vector<std::string> paths;  // distinct paths, outermost first: "capture > layer_3 > mlp";
                                   // "" when no range was open
  std::vector<std::vector<StringId>> components;  // per path, its range names, outermost first
  std::vector<int32_t> capture_roots;  // outermost range rows open at some capture, sorted
  GraphAlignment alignment;            // how the kernels without capture points were matched
};

// Ranges nested deeper than this around a capture point: the path keeps the innermost ones (a
// bound on the work and the paths' size for hostile traces; real nesting is a few levels).
inline constexpr int32_t kMaxPathDepth = 128;

// Cost: one path per distinct capture point (node) or eager counterpart, each a walk up the range
// tree (at most kMaxPathDepth steps); empty vectors apart from `graph` when there is no graph
// kernel.
GraphKernelPaths ComputeGraphKernelPaths(const Trace& trace);

}  // namespace sightline
