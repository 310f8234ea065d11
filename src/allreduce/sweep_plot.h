// `sightline allreduce plot`: the sweep as SVG heatmaps (time per strategy, best strategy, % slower
// than the best) per world size, dtype, fusion and mode, size-sweep line charts, and an index page.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "importers/allreduce_sweep/sweep_csv.h"

namespace sightline {

struct PlotFile {
  std::string name;  // a plain file name, e.g. "w2_bf16_none_graph_best.svg"
  std::string contents;
};

// All plots and "index.html" (last). `sources` are named on the index page. InvalidInput when
// the rows hold nothing to plot.
StatusOr<std::vector<PlotFile>> PlotSweep(const std::vector<SweepRow>& rows,
                                          const std::vector<std::string>& sources);

}  // namespace sightline
