// Rule graph_recapture: CUDA graphs captured or instantiated inside the iteration loop after the
// first iteration (cudaStreamBeginCapture ... cudaStreamEndCapture, cudaGraphInstantiate*,
// cuGraphInstantiate*). A graph pays off when it is captured once and replayed many times; a loop
// that captures again (a new batch size or shape without a captured graph, torch.compile
// recompiling, a graph dropped from a cache) pays the capture and the instantiation on the host,
// in the step. The host time counted is each capture's span (begin to end, on its thread) and
// each instantiation outside a counted span. The first iteration (warm-up) is left out.
// docs/analyses/findings.md, "graph_recapture".
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

#include "analyses/cuda_graphs/cuda_graphs.h"
#include "analyses/findings/findings.h"
#include "model/thread_key.h"

namespace sightline {
namespace {

enum class GraphCall { kNone, kBeginCapture, kEndCapture, kInstantiate };

GraphCall Classify(std::string_view name) {
  if (name.find("BeginCapture") != std::string_view::npos) return GraphCall::kBeginCapture;
  if (name.find("EndCapture") != std::string_view::npos) return GraphCall::kEndCapture;
  if (name.find("GraphInstantiate") != std::string_view::npos) return GraphCall::kInstantiate;
  return GraphCall::kNone;
}

}  // namespace

Status RuleGraphRecapture(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  if (c.loop().MainSet() == nullptr || c.loop().Windows().size() < 2) return Status::Ok();
  const std::vector<LoopWindow>& windows = c.loop().Windows();
  const LoopAfterWarmup loop(c);
  const ApiCallTable& a = trace.api_calls;
  int64_t captures = 0, instantiations = 0;
  DurationNs host_ns = 0;
  std::vector<int64_t> hit_windows;
  std::map<int64_t, int32_t> open_capture;  // thread -> row of its cudaStreamBeginCapture
  std::map<int64_t, TimeNs> counted_until;  // thread -> end of its last counted capture span
  Finding f;
  // One runtime call and the driver call inside it share a correlation id: count one of them.
  std::map<int64_t, int> seen_correlation;
  std::unordered_map<uint32_t, GraphCall> kind_of;  // by name id
  for (size_t r = 0; r < a.size(); ++r) {
    auto [known, inserted] = kind_of.try_emplace(a.name[r].value, GraphCall::kNone);
    if (inserted) known->second = Classify(trace.str(a.name[r]));
    const GraphCall kind = known->second;
    if (kind == GraphCall::kNone) continue;
    if (a.correlation[r] >= 0 && ++seen_correlation[a.correlation[r]] > 1) continue;
    const int64_t thread = ThreadKey(a.pid[r], a.tid[r]);
    if (kind == GraphCall::kBeginCapture) {
      open_capture[thread] = static_cast<int32_t>(r);
      continue;
    }
    const int64_t w = loop.Find(a.pid[r], a.start_ns[r]);
    if (kind == GraphCall::kEndCapture) {
      auto begin = open_capture.find(thread);
      if (begin == open_capture.end()) continue;  // the capture began outside the trace
      const int32_t b = begin->second;
      open_capture.erase(begin);
      if (w < 0) continue;
      ++captures;
      const DurationNs span = a.end_ns[r] - a.start_ns[b];
      host_ns += span;
      counted_until[thread] = a.end_ns[r];
      hit_windows.push_back(w);
      f.AddSpan(a.start_ns[b], a.end_ns[r], windows[w].device);
      continue;
    }
    if (w < 0) continue;
    ++instantiations;
    auto until = counted_until.find(thread);
    if (until == counted_until.end() || a.start_ns[r] >= until->second) {
      host_ns += a.dur_ns(r);
      f.AddSpan(a.start_ns[r], a.end_ns[r], windows[w].device);
    }
    hit_windows.push_back(w);
  }
  if (captures == 0 && instantiations == 0) return Status::Ok();
  std::sort(hit_windows.begin(), hit_windows.end());
  hit_windows.erase(std::unique(hit_windows.begin(), hit_windows.end()), hit_windows.end());
  const int64_t n = loop.iterations();
  f.id = "graph_recapture";
  f.severity =
      2 * static_cast<int64_t>(hit_windows.size()) >= n ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "CUDA graphs captured inside the loop: {} captures and {} instantiations in {} of {} "
      "iterations after the first ({} on the host)",
      captures, instantiations, hit_windows.size(), n, FormatDuration(host_ns));
  f.evidence.push_back({"captures", "Stream captures ended in the loop", captures, Unit::kCount});
  f.evidence.push_back(
      {"instantiations", "Graph instantiations in the loop", instantiations, Unit::kCount});
  f.evidence.push_back(
      {"host_ns", "Host time capturing and instantiating", host_ns, Unit::kDurationNs});
  f.evidence.push_back({"iterations", "Iterations with them",
                        static_cast<int64_t>(hit_windows.size()), Unit::kCount});
  f.evidence.push_back(
      {"graph_launches", "Graph launches in the trace", CountGraphLaunches(trace), Unit::kCount});
  f.where = c.loop().WindowLabel(windows[hit_windows.front()]);
  f.recommendation =
      "Capture each graph once, before the loop, and replay it: capture one graph per batch-size "
      "bucket at start-up (vLLM's cudagraph_capture_sizes, TensorRT-LLM's "
      "cuda_graph_config.batch_sizes, SGLang's cuda_graph_bs) and pad each step to the next "
      "bucket; keep shapes and addresses static so a captured graph stays valid (static input "
      "buffers, no allocation inside the capture); with torch.compile, mark dynamic dimensions "
      "or warm up every shape so it does not recompile and capture again; where only parameters "
      "change, update the instantiated graph (cudaGraphExecUpdate) instead of capturing anew.";
  f.estimated_savings_ns = host_ns;
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
