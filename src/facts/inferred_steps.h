// Steps of a loop that carries no step ranges (Hugging Face generate(), most real programs), found
// from the trace's own rhythm: one replay of the step's CUDA graph per step, or the host's
// synchronizations (every step ends reading something back, such as the stop check's .item()),
// grouped by the period of the launch counts between them. Used by the iterations fact when no
// range names an iteration and the user gave no --iterations. docs/metrics.md, "Iterations".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/time_units.h"
#include "model/trace.h"

namespace sightline {

class GraphFacts;  // facts/graph_facts.h
class HostFacts;   // facts/host_facts.h

struct InferredSteps {
  std::string method;   // "graph replays" or "synchronize cadence"
  std::string pattern;  // what marks a step: "cudaGraphLaunch of graph 2 (297 kernels)"
  int32_t pid = -1, tid = -1;
  StringId name;  // the marking call's name, for each step's name
  struct Step {
    TimeNs start_ns = 0, end_ns = 0;
    int64_t launches = 0;  // launch calls of the thread inside it
    int32_t family = 0;    // index into families
    // Cut from the end of a replay step (graph replays): the work between two replays that is
    // unlike the other steps' (a generate() call's end, the next call's set-up and prefill), from
    // the step's first synchronization to the next replay. Grouped by kernel mix among themselves.
    bool cut = false;
  };
  std::vector<Step> steps;
  // Steps of one kernel mix: a decode step and a prefill run the same layers through other
  // kernels (GEMM tiles for 8 rows or 1,024, a decode or a prefill attention kernel). Two steps
  // are of one family when at least kSameMix of the larger one's kernels (by name, counted) are
  // in the other. The family with the most steps is the loop; families[0] is it. Steps found by
  // graph replays are the loop by construction (each replay of the step's graph is a step); the
  // stretches cut from them (Step::cut) make the other families.
  struct Family {
    int64_t steps = 0;
    int64_t kernels_median = 0;
    // A kernel that this family's steps run and the loop's do not (the one with the most launches
    // in the family); empty for families[0].
    std::string distinct_kernel;
    // Every step of it comes right before a step of the loop and right after none: where a
    // prefill comes in a generate() call.
    bool opens_runs = false;
  };
  std::vector<Family> families;
  // How sure: the share of steps whose launch count lies within 10% of the median step's.
  double regular_share = 0;
  int period = 1;  // synchronizations per step (synchronize cadence)
};

inline constexpr double kSameMix = 0.9;

// The steps of the main launching thread, or an empty result (no steps) when the trace shows no
// regular loop: fewer than 3 steps, or fewer than half of them alike.
InferredSteps InferSteps(const Trace& trace, HostFacts& host, GraphFacts& graphs);

}  // namespace sightline
