// The diff's verdict loop by loop: a trace may hold several loops (IterationsResult::other_loops:
// graph_step_N replays of a CUDA graph beside eager_step_N steps of the same model), whose step
// times differ by a factor and whose changes differ too. Each loop found on both sides is compared
// on its own (diff/verdict.h); the gate combines their decisions and the report leads with the loop
// that decided. Rules: docs/analyses/diff.md, "Several loops in one trace".
#pragma once

#include <string>
#include <vector>

#include "diff/step_samples.h"
#include "diff/verdict.h"

namespace sightline {

struct LoopVerdicts {
  // [0]: the main loop (the main set's names; each run's main set when the sides share no name),
  // then the other loops found on both sides, in the baseline's order (most iterations first).
  std::vector<VerdictResult> loops;
  size_t lead = 0;       // the loop that decided the gate, whose figures the report shows
  std::string lead_why;  // why that loop leads; empty with one loop
  // Slower when a loop is slower, cannot tell when none is and one cannot tell, not slower when
  // every loop is not slower; no gate without a threshold.
  VerdictDecision decision = VerdictDecision::kNoGate;
  // The lead loop's sentence; with several loops, each other loop's answer after it.
  std::string sentence;
  // Loops found on one side only, or with too few iterations to gate (not compared).
  std::vector<std::string> notes;

  const VerdictResult& Lead() const { return loops[lead]; }
};

// `before[i]`: the loops of the baseline's run i, its main set first (CollectLoopSamples); a run
// may have only its main set (a saved baseline keeps only that). Loops are matched by name
// pattern. Loops other than the main one need options.min_iterations on each side to be compared.
LoopVerdicts ComputeLoopVerdicts(const std::vector<std::vector<RunSamples>>& before,
                                 const std::vector<std::vector<RunSamples>>& after,
                                 const VerdictOptions& options);

// A verdict of one loop as a LoopVerdicts (for callers that computed it themselves).
LoopVerdicts OneLoop(VerdictResult verdict);

}  // namespace sightline
