// Rule trt_host_bound: enqueuing an inference takes about as long as the engine's GPU compute, so
// the host bounds throughput (a trtexec timing export). docs/analyses/trt_engine.md, "Findings".
#include <fmt/format.h>

#include <algorithm>

#include "analyses/findings/findings.h"
#include "base/time_units.h"
#include "trt/trt_analysis.h"

namespace sightline {

Status RuleTrtHostBound(const TrtEngineResult& engine, std::vector<Finding>& out) {
  const TrtEngine& e = *engine.engine;
  const TrtLatency& l = engine.analysis->latency;
  if (!(l.known && l.compute.mean > 0 && l.enqueue.mean >= 0.8 * l.compute.mean)) {
    return Status::Ok();
  }
  bool graphs_on = false;
  if (e.metadata) {
    auto it = e.metadata->inference_options.find("CUDA Graph");
    graphs_on = it != e.metadata->inference_options.end() && it->second == "Enabled";
  }
  Finding f;
  f.id = "trt_host_bound";
  f.severity = l.enqueue.mean >= l.compute.mean ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format("Host-bound inference: enqueuing takes {} (mean) against {} of GPU compute",
                        FormatMs(l.enqueue.mean), FormatMs(l.compute.mean));
  f.evidence.push_back(
      {"enqueue_mean_ns", "Enqueue (mean)", l.enqueue.mean * kNsPerMs, Unit::kDurationNs});
  f.evidence.push_back(
      {"compute_mean_ns", "GPU compute (mean)", l.compute.mean * kNsPerMs, Unit::kDurationNs});
  f.evidence.push_back({"gpu_busy_pct", "GPU computing", l.gpu_busy_pct, Unit::kPercent});
  f.where = fmt::format("engine {}", e.name);
  f.recommendation =
      graphs_on ? "CUDA graphs are on already: enqueue several inferences at once (trtexec "
                  "--infStreams, a larger batch) or cut host work between inferences"
                : "Launch the engine as a CUDA graph (trtexec --useCudaGraph; in an application, "
                  "capture enqueueV3 into a graph once and replay it), so one launch replaces "
                  "the per-layer launches";
  // Per inference, as trtexec reports latency; the inferences measured are in the evidence.
  f.evidence.push_back({"inferences", "Inferences measured", l.compute.n, Unit::kCount});
  f.estimated_savings_ns =
      static_cast<int64_t>(std::max(0.0, l.enqueue.mean - l.compute.mean) * kNsPerMs);
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
