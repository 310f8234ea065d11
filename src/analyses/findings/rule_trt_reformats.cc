// Rule trt_reformats: the reformat layers the builder put between layers of different formats or
// precisions take a large share of the engine's layer time (a per-layer profile).
// docs/analyses/trt_engine.md, "Findings".
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "analyses/findings/findings.h"
#include "base/time_units.h"
#include "trt/trt_analysis.h"

namespace sightline {
namespace {

constexpr double kMinSharePct = 5.0;  // of the layer time

}  // namespace

Status RuleTrtReformats(const TrtEngineResult& engine, std::vector<Finding>& out) {
  const TrtEngineAnalysis& a = *engine.analysis;
  if (!(a.reformat_share_pct >= kMinSharePct)) return Status::Ok();
  Finding f;
  f.id = "trt_reformats";
  f.severity = a.reformat_share_pct >= 15 ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "Reformat layers take {:.1f}% of the engine's layer time ({} per run, {} "
      "layers)",
      a.reformat_share_pct, FormatMs(a.reformat_ms), a.reformat_layers);
  f.evidence.push_back(
      {"reformat_time_ns", "Reformat time per run", a.reformat_ms * kNsPerMs, Unit::kDurationNs});
  f.evidence.push_back(
      {"reformat_share_pct", "Share of layer time", a.reformat_share_pct, Unit::kPercent});
  std::vector<std::string> top;
  for (const TrtReformat& r : a.reformats) {
    if (r.noop || top.size() >= 3) continue;
    top.push_back(fmt::format("{} ({}, {}->{}, for {})", r.name, FormatMs(r.time_ms),
                              r.from_precision.empty() ? "?" : r.from_precision,
                              r.to_precision.empty() ? "?" : r.to_precision,
                              fmt::join(r.consumers, ", ")));
  }
  f.evidence.push_back({"largest", "Largest", fmt::format("{}", fmt::join(top, "; "))});
  if (a.latency.known) {
    f.evidence.push_back({"inferences", "Inferences measured", a.latency.compute.n, Unit::kCount});
  }
  f.where = fmt::format("engine {}", engine.engine->name);
  f.recommendation =
      "Give the layers next to each conversion the same format and precision: bind inputs and "
      "outputs in the format the first and last layers want (trtexec --inputIOFormats / "
      "--outputIOFormats, e.g. fp16:chw; BuilderConfig allowed formats), place Q/DQ so that "
      "INT8 regions do not alternate with FP16 ones (quantize the residual adds too), and "
      "check that the layer forcing a conversion has an INT8 or FP16 tactic";
  // Per inference: each one pays the reformats.
  f.estimated_savings_ns = static_cast<int64_t>(a.reformat_ms * kNsPerMs);
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
