// Replayed CUDA graph kernels matched to the same step run eagerly (docs/analyses/cuda_graphs.md,
// "Alignment with an eager step"). When a trace holds a graph's kernels but not where its nodes
// were captured (the capture before the recorded window; a PyTorch profiler trace), the kernels
// of a replay, in GPU order, are aligned by name with the kernels the host launched eagerly, in
// launch order: the eager kernel at the same place of the step gives the replayed kernel its host
// ranges (layer_3 > attention). Input: one Trace. Output: per kernel, its eager counterpart and
// the eager run it was matched in; counts of what could and could not be matched.
#pragma once

#include <cstdint>
#include <vector>

#include "base/time_units.h"
#include "model/trace.h"

namespace sightline {

// Per kernel row: 1 when it ran from a CUDA graph (it has a graph node, or its launching call is
// a graph launch, as in PyTorch profiler traces), not counting whole-graph rows (graph-mode
// tracing: a run, not a kernel).
std::vector<uint8_t> GraphKernelRows(const Trace& trace);

struct GraphAlignment {
  // The eager run a replay was matched with: its launching thread and the launch times of its
  // first and last matched kernels (on the clock of the trace that holds it: the reference's,
  // when `reference`). Ranges holding all of it (the step) say nothing about one kernel; ranges
  // inside it do.
  struct EagerRun {
    int32_t pid = -1, tid = -1;
    TimeNs first_launch_ns = 0, last_launch_ns = 0;
  };
  // Per kernel row (empty when the trace has no graph kernel without a capture point): the eager
  // kernel row matched with it (a row of the reference trace, when `reference`), or kNoRow; and
  // the index into eager_runs of its match.
  std::vector<int32_t> counterpart;
  std::vector<int32_t> eager_run;
  std::vector<EagerRun> eager_runs;
  bool reference = false;  // the eager runs are another trace's (AlignGraphKernelsWithReference)

  int64_t kernels = 0;          // graph kernels without a capture point
  int64_t kernels_matched = 0;  // ... given an eager counterpart
  int64_t replays = 0;          // replays those kernels belong to (one per graph launch)
  int64_t replays_matched = 0;  // ... whose kernel sequence matched an eager run
  int64_t sequences = 0;        // distinct kernel sequences among the replays (graphs)
  int64_t sequences_matched = 0;
  int64_t sequences_cut = 0;  // not searched: the work bound was spent (huge or hostile traces)
};

// Replays are the graph kernels of one launching call (or correlation id), ordered by GPU start;
// replays with the same kernel names in the same order are aligned once. The eager run chosen is
// the one (per thread, in launch order) that agrees with the replay at the most places; a
// longest-common-subsequence pass over it then allows kernels added or missing on either side. A
// replay is matched when at least half its kernels find a counterpart. Kernels that already have
// a capture point are left alone. Cost: O(eager kernels x anchors + matched replays' length^2),
// bounded in all (sequences_cut counts what the bound left out).
GraphAlignment AlignGraphKernels(const Trace& trace);
// The same with GraphKernelRows(trace) computed by the caller.
GraphAlignment AlignGraphKernels(const Trace& trace, const std::vector<uint8_t>& graph);

// The same search against the eager runs of a second trace (`analyze --eager-reference`: the same
// program run eagerly, recorded separately), for the replays that `in_trace` (this trace's own
// alignment; may be null) left unmatched, so that a capture point wins over both alignments and
// an eager run of the trace itself over the reference. Kernel names are compared as text; times
// of the two traces are never compared (counterparts and eager runs are the reference's rows and
// clock). Empty when `reference` is `trace`.
GraphAlignment AlignGraphKernelsWithReference(const Trace& trace, const std::vector<uint8_t>& graph,
                                              const Trace& reference,
                                              const GraphAlignment* in_trace);

}  // namespace sightline
