// Per graph kernel, the host ranges that say what it is: those open when its graph node was
// captured, or, for a kernel without a capture point, those around its eager counterpart
// (graph_alignment.h). One definition for the cuda_graphs section (docs/analyses/cuda_graphs.md)
// and the Perfetto export's graph range tracks (docs/formats/perfetto.md).
// Input: one Trace. Output: per kernel row, how it was attributed and an index into the distinct
// range paths.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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
  // The same in the eager reference trace (`analyze --eager-reference`): its replay had no
  // capture point and matched no eager run of its own trace; its path is the reference's ranges
  // around its counterpart's launch, below those holding the whole reference eager run.
  kReference,
};
// "none", "capture", "aligned", "reference"
const char* PathSourceName(PathSource source);

struct GraphKernelPaths {
  std::vector<uint8_t> graph;      // per kernel row: GraphKernelRows(trace)
  std::vector<PathSource> source;  // per kernel row
  std::vector<int32_t> path;       // per kernel row: index into `paths`; -1 when kNone
  std::vector<std::string> paths;  // distinct paths, outermost first: "capture > layer_3 > mlp";
                                   // "" when no range was open
  // Per path, its range names, outermost first: views into the pool of the trace the path was
  // read from (this one, or the eager reference, which must outlive the paths).
  std::vector<std::vector<std::string_view>> components;
  std::vector<int32_t> capture_roots;  // outermost range rows open at some capture, sorted
  GraphAlignment alignment;            // how the kernels without capture points were matched
  // The replays `alignment` left unmatched, against the eager reference's runs (empty without a
  // reference, or when every replay had a capture point or an eager run in this trace).
  GraphAlignment reference_alignment;
};

// Ranges nested deeper than this around a capture point: the path keeps the innermost ones (a
// bound on the work and the paths' size for hostile traces; real nesting is a few levels).
inline constexpr int32_t kMaxPathDepth = 128;

// Cost: one path per distinct capture point (node) or eager counterpart, each a walk up the range
// tree (at most kMaxPathDepth steps); empty vectors apart from `graph` when there is no graph
// kernel. Each graph kernel takes the first of: its capture point, an eager counterpart in
// `trace`, an eager counterpart in `eager_reference` (may be null).
GraphKernelPaths ComputeGraphKernelPaths(const Trace& trace,
                                         const Trace* eager_reference = nullptr);

}  // namespace sightline
