#include "facts/graph_facts.h"

#include <algorithm>

#include "facts/graph_kernel_paths.h"
#include "facts/graph_replays.h"

namespace sightline {

GraphFacts::GraphFacts(const Trace& trace, const FactsInputs& inputs, HostFacts& host)
    : trace_(trace), inputs_(inputs), host_(host) {}

GraphFacts::~GraphFacts() = default;

const LaunchIndex& GraphFacts::LaunchesWithCapture() {
  std::call_once(capture_launches_once_, [this] {
    const std::vector<uint8_t>& graph = GraphPaths().graph;
    // Without graph kernels there is no second point: the launch index is the same.
    if (std::find(graph.begin(), graph.end(), 1) == graph.end()) return;
    capture_launches_ = std::make_unique<LaunchIndex>(trace_, LaunchPoints::kLaunchAndCapture,
                                                      &GraphPaths().alignment);
  });
  return capture_launches_ ? *capture_launches_ : host_.Launches();
}

const GraphKernelPaths& GraphFacts::GraphPaths() {
  std::call_once(graph_paths_once_, [this] {
    graph_paths_ = std::make_unique<GraphKernelPaths>(
        ComputeGraphKernelPaths(trace_, inputs_.eager_reference.get()));
  });
  return *graph_paths_;
}

const GraphReplays& GraphFacts::Replays() {
  std::call_once(replays_once_, [this] {
    replays_ = std::make_unique<GraphReplays>(ComputeGraphReplays(trace_, GraphPaths().graph));
  });
  return *replays_;
}

}  // namespace sightline
