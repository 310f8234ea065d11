// Turns a VerdictResult (diff/verdict.h) into the "diff_verdict" report section and the CI gate's
// three-way answer in Report::gate. Layout: docs/formats/diff-json.md, "diff_verdict".
#pragma once

#include "diff/verdict.h"
#include "report/report.h"

namespace sightline {

// Appends the "diff_verdict" section: the one-sentence explanation first, then the change in
// median and mean step time with their intervals, the decision, and the parts (largest first,
// `top_n` rows), ranges and categories with their intervals.
void AddVerdictSection(const VerdictResult& verdict, int top_n, Report& report);

// With a threshold and an available verdict, sets Report::gate from the decision (slower: failed;
// cannot tell: undecided) and returns true; otherwise leaves it and returns false.
bool SetGateFromVerdict(const VerdictResult& verdict, Report& report);

}  // namespace sightline
