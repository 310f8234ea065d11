// The "iterations" report section (registry entry): the iterations the facts found
// (facts/iterations.h, LoopFacts::Iterations()) as a report section, joined to --iteration-log
// when given. Definitions: docs/metrics.md, "Iterations"; the section:
// docs/analyses/iterations.md.
#pragma once

#include "base/status.h"
#include "report/report.h"

namespace sightline {

class AnalysisContext;  // analyses/common/analysis_context.h

// Registry entry: the "iterations" section.
Status RunIterationsSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
