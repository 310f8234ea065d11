// The analysis context: one per trace, what every analysis entry point
// (ComputeX(AnalysisContext&, const XOptions&)) and every finding rule receives. It holds the
// trace's facts (facts/trace_facts.h: one holder per family, each fact computed once, when first
// asked: context.gpu().Busy(d), context.kernels().Category(name), context.host().Launches(),
// context.graphs().Replays(), context.loop().Windows(), context.samples()) beside what belongs to
// the analyses: the analyze options, the run's other documents (RunInputs) and the cache of whole
// analysis results that other analyses read (DESIGN.md, "Facts and results"). Thread-safe as the
// facts are: the analyses of one trace may run on several threads (AnalyzeTrace).
#pragma once

#include <memory>

#include "analyses/common/analysis.h"
#include "base/work_share.h"
#include "facts/results_cache.h"
#include "facts/trace_facts.h"
#include "model/trace.h"

namespace sightline {

class AnalysisContext {
 public:
  // Borrows `trace`, which must outlive the context.
  explicit AnalysisContext(const Trace& trace, AnalyzeOptions options = {}, RunInputs inputs = {})
      : facts_(trace, options, inputs), options_(std::move(options)), inputs_(std::move(inputs)) {}
  // Owns the trace (the pipeline's case).
  explicit AnalysisContext(std::unique_ptr<const Trace> trace, AnalyzeOptions options = {},
                           RunInputs inputs = {})
      : facts_(std::move(trace), options, inputs),
        options_(std::move(options)),
        inputs_(std::move(inputs)) {}
  AnalysisContext(const AnalysisContext&) = delete;
  AnalysisContext& operator=(const AnalysisContext&) = delete;

  const Trace& trace() const { return facts_.trace(); }
  // The trace's facts, by family (facts/trace_facts.h).
  TraceFacts& facts() { return facts_; }
  GpuTimeFacts& gpu() { return facts_.gpu(); }
  KernelFacts& kernels() { return facts_.kernels(); }
  HostFacts& host() { return facts_.host(); }
  GraphFacts& graphs() { return facts_.graphs(); }
  LoopFacts& loop() { return facts_.loop(); }
  const MetricSamples& samples() { return facts_.samples(); }

  // Every option of the run; the facts read their part (FactsOptions, which these extend) too.
  const AnalyzeOptions& options() const { return options_; }
  // The run's documents besides its traces, shared by every trace of the run; the facts read
  // their part (FactsInputs, which these extend) too.
  const RunInputs& inputs() const { return inputs_; }

  // The analyses' whole results that other analyses and the rules read (idle gaps, threads, GPU
  // metrics, memory), each computed once per trace through its analysis's Cached...(context)
  // accessor. A registry entry that reads one declares it (AnalysisEntry::needs).
  ResultsCache& results() { return results_; }

  // Where an analysis may split its work for the run's idle analysis threads (base/work_share.h);
  // null when the analyses run on one thread. Set by the pipeline for the time of a run.
  WorkShare* work_share() { return work_share_; }
  void set_work_share(WorkShare* share) { work_share_ = share; }

 private:
  TraceFacts facts_;
  AnalyzeOptions options_;
  RunInputs inputs_;
  ResultsCache results_;
  WorkShare* work_share_ = nullptr;
};

}  // namespace sightline
