// The cuda_graphs section's part on graphs traced as a whole: the per-range estimate
// (whole_graph_estimate.h) as facts, a table per graph and one per range, and notes on what could
// not be estimated; with an iteration log, what it gave the choice of eager runs
// (docs/analyses/cuda_graphs.md, "Graphs traced as a whole").
#pragma once

#include "analyses/cuda_graphs/graph_step_batches.h"
#include "analyses/cuda_graphs/whole_graph_estimate.h"
#include "report/report.h"

namespace sightline {

// The estimate into `s`: facts, a table per graph and one per range when some graph was
// estimated, notes on what could not be. `sb` (may be null): the steps' batches from the
// iteration log. Returns whether a graph was.
bool AddWholeGraphEstimate(const WholeGraphEstimate& e, const GraphStepBatches* sb, int top_n,
                           Section& s);

}  // namespace sightline
