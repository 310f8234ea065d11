// The CUDA graph facts of one trace (a holder of TraceFacts, facts/trace_facts.h): each graph
// kernel's range path (graph_kernel_paths.h), the replays (graph_replays.h), and the launch index
// with each replayed kernel's capture point. Each is built once, by the first thread that asks
// (std::call_once).
#pragma once

#include <memory>
#include <mutex>

#include "facts/facts_inputs.h"
#include "facts/host_facts.h"
#include "facts/launch_projection.h"
#include "model/trace.h"

namespace sightline {

struct GraphKernelPaths;  // facts/graph_kernel_paths.h
struct GraphReplays;      // facts/graph_replays.h

class GraphFacts {
 public:
  // Borrows `trace`, `inputs` (the eager reference) and `host` (the plain launch index), which
  // must outlive the facts.
  GraphFacts(const Trace& trace, const FactsInputs& inputs, HostFacts& host);
  ~GraphFacts();
  GraphFacts(const GraphFacts&) = delete;
  GraphFacts& operator=(const GraphFacts&) = delete;

  // HostFacts::Launches() with each replayed graph kernel's second point: its capture, else its
  // eager counterpart's launch (LaunchPoints::kLaunchAndCapture with GraphPaths().alignment). What
  // attributes work to the ranges that say what it is (NVTX projection, GPU metrics per range).
  const LaunchIndex& LaunchesWithCapture();
  // Per graph kernel, its capture-time (or aligned) range path and how it was attributed; with
  // FactsInputs::eager_reference, replays left without either are aligned with the reference's
  // eager runs (PathSource::kReference: a path, not a point of this trace, so LaunchesWithCapture
  // has no point for them).
  const GraphKernelPaths& GraphPaths();
  // The CUDA graph replays in launch order, the distinct graphs they replay, the captures.
  const GraphReplays& Replays();

 private:
  const Trace& trace_;
  const FactsInputs& inputs_;
  HostFacts& host_;
  std::once_flag capture_launches_once_, graph_paths_once_, replays_once_;
  std::unique_ptr<LaunchIndex> capture_launches_;
  std::unique_ptr<GraphKernelPaths> graph_paths_;
  std::unique_ptr<GraphReplays> replays_;
};

}  // namespace sightline
