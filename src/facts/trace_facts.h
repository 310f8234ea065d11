// The facts of one trace: what several analyses and finding rules share, each computed once, when
// first asked (DESIGN.md, "Facts and results"). TraceFacts owns the trace (or borrows it), the
// options and documents the facts read, and one small holder per family of facts, each in its own
// file with its own once_flags: GPU time (gpu_time_facts.h), kernels and communication
// (kernel_facts.h), host (host_facts.h), CUDA graphs (graph_facts.h), the loop (loop_facts.h) and
// the sampled metrics (metric_samples.h). A holder that builds on another's facts holds a reference
// to that holder, never to the whole. The facts stage sits between the model and the analyses and
// includes no analysis; the analyses reach the holders through their AnalysisContext
// (analyses/common/analysis_context.h: context.gpu().Busy(d), context.loop().Windows(), ...). Add a
// fact to its family's holder when a second analysis would otherwise compute it again; what one
// analysis alone reads stays in that analysis's room.
// Thread-safe: the analyses of one trace may run on several threads (AnalyzeTrace); each fact is
// built once, under its std::once_flag, by the first thread that asks, while the others wait for
// it. Definitions: docs/metrics.md.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "base/status.h"
#include "facts/facts_inputs.h"
#include "facts/facts_options.h"
#include "facts/gpu_time_facts.h"
#include "facts/graph_facts.h"
#include "facts/host_facts.h"
#include "facts/iterations.h"
#include "facts/kernel_facts.h"
#include "facts/loop_facts.h"
#include "model/trace.h"

namespace sightline {

class MetricSamples;  // facts/metric_samples.h

class TraceFacts {
 public:
  // Borrows `trace`, which must outlive the facts.
  explicit TraceFacts(const Trace& trace, FactsOptions options = {}, FactsInputs inputs = {});
  // Owns the trace (the pipeline's case).
  explicit TraceFacts(std::unique_ptr<const Trace> trace, FactsOptions options = {},
                      FactsInputs inputs = {});
  ~TraceFacts();
  TraceFacts(const TraceFacts&) = delete;
  TraceFacts& operator=(const TraceFacts&) = delete;

  const Trace& trace() const { return *trace_; }
  // What the facts read (AnalysisContext::options() shows the analyses the whole AnalyzeOptions,
  // which extend these).
  const FactsOptions& options() const { return options_; }
  // The run's documents the facts read (AnalysisContext::inputs() shows the analyses the whole
  // RunInputs, which extend these).
  const FactsInputs& inputs() const { return inputs_; }

  // Devices with work, busy unions, (process, device) pairs, total kernel time.
  GpuTimeFacts& gpu() { return gpu_; }
  // Kernel categories, communication against computation.
  KernelFacts& kernels() { return kernels_; }
  // Launches, launching threads, blocking calls, GC, GIL, OS waits and off-CPU time.
  HostFacts& host() { return host_; }
  // Graph kernels' range paths, replays, the launch index with capture points.
  GraphFacts& graphs() { return graphs_; }
  // Iterations, the main set, the loop windows.
  LoopFacts& loop() { return loop_; }
  // The facts that nearly every run of the analyses builds first and that wait on nothing of each
  // other: the busy unions and the launch index (the iterations, which most analyses read, need
  // both). With several threads the pipeline builds them side by side before the analyses start;
  // otherwise the first analysis builds both while the others wait for them.
  std::vector<std::function<void()>> IndependentFirstFacts();
  // The GPU metric samples as step functions per (device, metric), for figures over intervals;
  // built once, when first asked.
  const MetricSamples& samples();

 private:
  std::unique_ptr<const Trace> owned_;
  const Trace* trace_;
  FactsOptions options_;
  FactsInputs inputs_;
  // The holders, in the order they build on each other (each borrows those above it).
  GpuTimeFacts gpu_;
  KernelFacts kernels_;
  HostFacts host_;
  GraphFacts graphs_;
  LoopFacts loop_;
  std::once_flag samples_once_;
  std::unique_ptr<MetricSamples> samples_;
};

// The iterations of the facts' trace with other options than FactsOptions' (LoopFacts::
// Iterations() keeps those).
inline StatusOr<IterationsResult> ComputeIterations(TraceFacts& facts,
                                                    const IterationsOptions& options) {
  return ComputeIterations(facts.trace(), facts.gpu(), facts.host(), facts.graphs(), options);
}

}  // namespace sightline
