// The cuda_graphs section's options (cuda_graphs.h): a second trace whose eager runs estimate the
// per-range time of graphs traced as a whole (`analyze --eager-reference`). Its own header, in the
// common room (src/CMakeLists.txt), so that AnalyzeOptions can hold it.
#pragma once

#include <memory>
#include <string>

namespace sightline {

struct Trace;  // model/trace.h

struct CudaGraphsOptions {
  // --eager-reference: the same program run eagerly, recorded separately; null when not given.
  // Whole-graph runs of every analysed trace are estimated from its eager runs instead of the
  // trace's own (facts/whole_graph_estimate.h).
  std::shared_ptr<const Trace> eager_reference;
  std::string eager_reference_path;  // as given, for the section's note
};

}  // namespace sightline
