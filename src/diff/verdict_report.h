// Turns a VerdictResult (diff/verdict.h) into the "diff_verdict" report section and the CI gate's
// three-way answer in Report::gate. Layout: docs/formats/diff-json.md, "diff_verdict".
#pragma once

#include "diff/loop_verdicts.h"
#include "diff/verdict.h"
#include "report/report.h"

namespace sightline {

// Appends the "diff_verdict" section: the one-sentence explanation first, then (several loops)
// the loop it shows and why, and a table of every loop's answer; then the lead loop's change in
// median and mean step time with their intervals, the decision, and the parts (largest first,
// `top_n` rows), ranges and categories with their intervals.
void AddVerdictSection(const LoopVerdicts& verdicts, int top_n, Report& report);
void AddVerdictSection(const VerdictResult& verdict, int top_n, Report& report);

// With a threshold and an available verdict, sets Report::gate from the decision (slower: failed;
// cannot tell: undecided) and returns true; otherwise leaves it and returns false.
bool SetGateFromVerdict(const LoopVerdicts& verdicts, Report& report);
bool SetGateFromVerdict(const VerdictResult& verdict, Report& report);

// What decided, for the gate's section: the statistics with their intervals and the threshold,
// the loop when there are several ("median GPU time launched per step +7.0% (95%: +6.9% to
// +7.1%), above the threshold +5.0%, in `graph_step_N`").
std::string DecidedBy(const LoopVerdicts& verdicts);

}  // namespace sightline
