// Rule trt_data_transfers: the engine's measured latency is mostly host-device copies (a trtexec
// timing export without --noDataTransfers). docs/analyses/trt_engine.md, "Findings".
#include <fmt/format.h>

#include "analyses/findings/findings.h"
#include "base/time_units.h"
#include "trt/trt_analysis.h"

namespace sightline {

Status RuleTrtDataTransfers(const TrtEngineResult& engine, std::vector<Finding>& out) {
  const TrtLatency& l = engine.analysis->latency;
  if (!(l.known && l.compute.mean > 0 && l.h2d.mean + l.d2h.mean >= l.compute.mean)) {
    return Status::Ok();
  }
  Finding f;
  f.id = "trt_data_transfers";
  f.severity = Severity::kMedium;
  f.title =
      fmt::format("The latency measures copies: H2D {} + D2H {} (mean) against {} of GPU compute",
                  FormatMs(l.h2d.mean), FormatMs(l.d2h.mean), FormatMs(l.compute.mean));
  f.evidence.push_back({"h2d_mean_ns", "H2D (mean)", l.h2d.mean * kNsPerMs, Unit::kDurationNs});
  f.evidence.push_back({"d2h_mean_ns", "D2H (mean)", l.d2h.mean * kNsPerMs, Unit::kDurationNs});
  f.evidence.push_back(
      {"compute_mean_ns", "GPU compute (mean)", l.compute.mean * kNsPerMs, Unit::kDurationNs});
  f.where = fmt::format("engine {}", engine.engine->name);
  f.recommendation =
      "Measure the engine alone with trtexec --noDataTransfers; in the application keep inputs "
      "and outputs on the GPU between stages, or overlap the copies with compute (pinned "
      "memory, a second stream)";
  f.evidence.push_back({"inferences", "Inferences measured", l.compute.n, Unit::kCount});
  f.estimated_savings_ns = static_cast<int64_t>((l.h2d.mean + l.d2h.mean) * kNsPerMs);
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
