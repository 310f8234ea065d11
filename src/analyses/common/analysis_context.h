// The analysis context: one per trace, what every analysis entry point
// (ComputeX(AnalysisContext&, const XOptions&)) and every finding rule receives. It is the trace's
// facts (facts/trace_facts.h: busy unions, categories, launches, iterations, ..., each computed
// once, when first asked) plus what belongs to the analyses: the analyze options, the run's other
// documents (RunInputs) and the cache of whole analysis results that other analyses read
// (DESIGN.md, "Facts and results"). Thread-safe as the facts are: the analyses of one trace may
// run on several threads (AnalyzeTrace).
#pragma once

#include <memory>

#include "analyses/common/analysis.h"
#include "facts/results_cache.h"
#include "facts/trace_facts.h"
#include "model/trace.h"

namespace sightline {

class AnalysisContext : public TraceFacts {
 public:
  // Borrows `trace`, which must outlive the context.
  explicit AnalysisContext(const Trace& trace, AnalyzeOptions options = {}, RunInputs inputs = {})
      : TraceFacts(trace, options, inputs),
        options_(std::move(options)),
        inputs_(std::move(inputs)) {}
  // Owns the trace (the pipeline's case).
  explicit AnalysisContext(std::unique_ptr<const Trace> trace, AnalyzeOptions options = {},
                           RunInputs inputs = {})
      : TraceFacts(std::move(trace), options, inputs),
        options_(std::move(options)),
        inputs_(std::move(inputs)) {}

  // Every option of the run; the facts read their part (FactsOptions, which these extend) too.
  const AnalyzeOptions& options() const { return options_; }
  // The run's documents besides its traces, shared by every trace of the run; the facts read
  // their part (FactsInputs, which these extend) too.
  const RunInputs& inputs() const { return inputs_; }

  // The analyses' whole results that other analyses and the rules read (idle gaps, threads, GPU
  // metrics, memory), each computed once per trace through its analysis's Cached...(context)
  // accessor. A registry entry that reads one declares it (AnalysisEntry::needs).
  ResultsCache& results() { return results_; }

 private:
  AnalyzeOptions options_;
  RunInputs inputs_;
  ResultsCache results_;
};

}  // namespace sightline
