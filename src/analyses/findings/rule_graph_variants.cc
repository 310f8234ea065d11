// Rule graph_variants: many distinct CUDA graphs replayed, one per batch-size bucket (or shape):
// each costs a capture and an instantiation on the host and keeps its own memory, and a bucket
// replayed rarely does not pay its capture back. Reports the graphs with their replays, and, where
// the trace holds the captures (cudaStreamBeginCapture .. EndCapture, then cudaGraphInstantiate*),
// their host cost; with capture points, which capture made which replayed graph, and the graphs
// captured but not replayed in the trace. The estimated saving is the host time of captures whose
// graph was replayed at most once in the trace. docs/analyses/findings.md, "graph_variants".
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyses/findings/findings.h"
#include "base/stats.h"
#include "facts/graph_replays.h"

namespace sightline {
namespace {

constexpr size_t kMinVariants = 3;  // one graph per bucket of a handful is the usual setup
constexpr size_t kShown = 6;        // graphs named in the finding

}  // namespace

Status RuleGraphVariants(AnalysisContext& c, std::vector<Finding>& out) {
  const GraphReplays& gr = c.graphs().Replays();
  if (gr.variants.size() < kMinVariants) return Status::Ok();

  std::vector<int64_t> replays;
  int64_t rare = 0;  // graphs replayed at most once
  for (const GraphVariant& v : gr.variants) {
    replays.push_back(v.replays);
    rare += v.replays <= 1;
  }
  // Captures in the trace: their host cost, and where capture points tie them to a graph, the
  // ones whose graph was not replayed (or only once) in the trace.
  DurationNs capture_ns = 0, unpaid_ns = 0;
  int64_t linked = 0, not_replayed = 0;
  for (const GraphCapture& cap : gr.captures) {
    capture_ns += cap.host_ns();
    if (cap.variant >= 0) {
      ++linked;
      if (gr.variants[cap.variant].replays <= 1) unpaid_ns += cap.host_ns();
    }
  }
  // Captures of no replayed graph say "not replayed" only when capture points tie the others.
  if (linked > 0) {
    for (const GraphCapture& cap : gr.captures) {
      if (cap.variant >= 0) continue;
      ++not_replayed;
      unpaid_ns += cap.host_ns();
    }
  }

  Finding f;
  f.id = "graph_variants";
  f.severity = 2 * rare >= static_cast<int64_t>(gr.variants.size()) || not_replayed > 0
                   ? Severity::kMedium
                   : Severity::kLow;
  f.title = fmt::format("{} distinct CUDA graphs replayed ({} replays; {} replayed at most once){}",
                        gr.variants.size(), gr.replays.size(), rare,
                        gr.captures.empty()
                            ? std::string()
                            : fmt::format("; {} captures in the trace cost {} on the host",
                                          gr.captures.size(), FormatDuration(capture_ns)));
  f.evidence.push_back({"graphs", "Distinct graphs replayed",
                        static_cast<int64_t>(gr.variants.size()), Unit::kCount});
  f.evidence.push_back(
      {"replays", "Graph replays", static_cast<int64_t>(gr.replays.size()), Unit::kCount});
  f.evidence.push_back(
      {"median_replays", "Median replays per graph", Median(replays), Unit::kNumber});
  f.evidence.push_back({"rare_graphs", "Graphs replayed at most once", rare, Unit::kCount});
  f.evidence.push_back({"captures", "Stream captures in the trace",
                        static_cast<int64_t>(gr.captures.size()), Unit::kCount});
  if (!gr.captures.empty()) {
    f.evidence.push_back({"capture_host_ns", "Host time capturing and instantiating", capture_ns,
                          Unit::kDurationNs});
  }
  if (linked > 0) {
    f.evidence.push_back({"captured_not_replayed", "Graphs captured, not replayed in the trace",
                          not_replayed, Unit::kCount});
    f.evidence.push_back({"unpaid_capture_ns", "Host time of captures whose graph ran at most once",
                          unpaid_ns, Unit::kDurationNs});
  }
  // The graphs, most replayed first: replays, kernels and GPU time per replay, capture cost.
  std::vector<size_t> order(gr.variants.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return gr.variants[a].replays > gr.variants[b].replays;
  });
  std::string list;
  for (size_t i = 0; i < std::min(order.size(), kShown); ++i) {
    const GraphVariant& v = gr.variants[order[i]];
    list += fmt::format("{}{}: {} replays, {} GPU per replay", i ? "; " : "", v.label, v.replays,
                        FormatDuration(v.replays > 0 ? v.gpu_ns / v.replays : 0));
    if (v.capture >= 0) {
      list += fmt::format(", captured in {}", FormatDuration(gr.captures[v.capture].host_ns()));
    }
  }
  if (order.size() > kShown) list += fmt::format("; {} more", order.size() - kShown);
  f.where = list;
  for (const GraphCapture& cap : gr.captures) f.AddSpan(cap.begin_ns, cap.end_ns);
  f.recommendation =
      "Each captured graph costs a capture and an instantiation at start-up (or in the loop, see "
      "graph_recapture) and keeps its own static input and output buffers; a batch size replayed "
      "rarely does not pay that back. Capture the sizes the scheduler actually produces: drop "
      "sizes that are rarely or never replayed and cap the largest at the concurrency reached "
      "(vLLM: cudagraph_capture_sizes, max_cudagraph_capture_size; TensorRT-LLM: "
      "cuda_graph_config.batch_sizes, max_batch_size; SGLang: cuda_graph_bs, cuda_graph_max_bs). "
      "Fewer sizes pad more (graph_padding): coarsen where a larger batch costs little GPU time "
      "(small decode batches are mostly bound by reading the weights) and keep fine steps where "
      "the time per replay grows with the batch.";
  f.estimated_savings_ns = unpaid_ns;
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
