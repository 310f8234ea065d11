// The options the facts read (src/facts/, between the model and the analyses): the few choices
// that change what a trace's facts are. Each analysis's own options stay with it, and the CLI's
// AnalyzeOptions (analyses/common/analysis.h) extends these.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace sightline {

struct Trace;  // model/trace.h

struct FactsOptions {
  // Regex (RE2) naming the iteration ranges (--iterations); empty: the default names
  // (docs/metrics.md, "Iterations").
  std::string iterations_regex;
  // Names of the host ranges that mark garbage collections (any domain, any kind; --gc-ranges):
  // TensorRT-LLM's TLLM_PROFILE_RECORD_GC and Sightline's Python package write "Python GC".
  std::vector<std::string> gc_range_names = {"Python GC"};
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
