// The options the facts read (src/facts/, between the model and the analyses): the few choices
// that change what a trace's facts are (the documents they read are FactsInputs). Each analysis's
// own options stay with it, and the CLI's AnalyzeOptions (analyses/common/analysis.h) extends
// these.
#pragma once

#include <string>
#include <vector>

namespace sightline {

struct FactsOptions {
  // Regex (RE2) naming the iteration ranges (--iterations); empty: the default names
  // (docs/metrics.md, "Iterations").
  std::string iterations_regex;
  // Names of the host ranges that mark garbage collections (any domain, any kind; --gc-ranges):
  // TensorRT-LLM's TLLM_PROFILE_RECORD_GC and Sightline's Python package write "Python GC".
  std::vector<std::string> gc_range_names = {"Python GC"};
};

}  // namespace sightline
