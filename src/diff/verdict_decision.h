// The verdict's decision and its words (verdict.h): whether the step time is host noise, the
// decision against the threshold with its reason and what would decide it, and the one-sentence
// summary. ComputeVerdict calls them in this order, once the estimates are in the result.
#pragma once

#include <string>

#include "diff/verdict.h"

namespace sightline::verdict {

// Whether the step time is host noise (kHostBoundBusyPct): then only the GPU time launched is
// gated, and the verdict says why (step_time_gated, step_time_noise, the busy shares).
void JudgeStepTime(VerdictResult& r);

// The decision against options.threshold_pct (none without one): decision, decided_by and its
// detail, the reason, and the iterations (runs) that would decide when it cannot tell.
void Decide(const VerdictOptions& options, VerdictResult& r);

// The sentence: the statistics that decided first, with their intervals, then the parts of the
// step time that changed beyond the noise. `loop`: the loop's label, when the step is one.
void MakeSentence(VerdictResult& r, const std::string& loop);

}  // namespace sightline::verdict
