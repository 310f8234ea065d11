// The documents besides its trace that a trace's facts read (src/facts/): read once per run by
// their document kind's join (analyses/common/document_kind.h) and shared by every trace of it.
// Documents, not choices: the choices the facts read are FactsOptions; the analyses' RunInputs
// (analyses/common/run_inputs.h) extend these.
#pragma once

#include <memory>
#include <string>

namespace sightline {

struct Trace;  // model/trace.h

struct FactsInputs {
  // --eager-reference: the same program run eagerly, recorded separately (another process,
  // another clock: only its ranges and kernels are read); null when not given. Its eager runs
  // estimate the per-range time of graphs traced as a whole
  // (analyses/cuda_graphs/whole_graph_estimate.h) and give node-traced replays without a capture
  // point or an eager run of their own trace their range paths (facts/graph_kernel_paths.h,
  // PathSource::kReference).
  std::shared_ptr<const Trace> eager_reference;
  std::string eager_reference_path;  // as given, for the notes
};

}  // namespace sightline
