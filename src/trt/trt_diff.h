// `sightline diff ENGINE_A ENGINE_B` for two TensorRT engines (any file of each, trt/trt_engine.h):
// the engine's time (GPU compute from the timing exports, and the sum of per-layer times), per
// layer type and per precision; layers matched by name, then by the network layers fused into them
// (SplitFusedName) where fusion or naming differs; layers that appeared or vanished; precision
// changes; and the CI gate (docs/analyses/trt_engine.md, "Diff"). Times in the report are ns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "report/report.h"
#include "trt/trt_analysis.h"

namespace sightline {

struct TrtDiffOptions {
  int top_n = 15;
  // Types under this share (percent) of the baseline's layer time are not gated one by one.
  double min_share_pct = 1.0;
  // Fails the gate when the engine's time, or a gated type's, grew by more than this percent.
  std::optional<double> fail_if_slower_pct;
};

// One layer of the candidate against its match in the baseline.
struct TrtLayerMatch {
  int baseline = -1, candidate = -1;  // indexes into the analyses' layers; -1 none
  std::string how;                    // "name", "parts", "type order"
};

// Pairs layers: same name first, then a shared network layer among their parts (weights and
// Q/DQ nodes left out), then, per layer type with as many layers left on both sides, in engine
// order. Layers left over appear in one side only.
std::vector<TrtLayerMatch> MatchTrtLayers(const TrtEngineAnalysis& baseline,
                                          const TrtEngineAnalysis& candidate);

// Sections trt_diff (and trt_gate with a threshold) for two analysed engines; inputs 0 and 1 of
// `report` are the baseline and the candidate. Sets Report::gate when the gate fails.
void AddTrtDiff(const TrtEngineAnalysis& baseline, const TrtEngineAnalysis& candidate,
                const TrtDiffOptions& options, Report& report);

// Reads both engines and builds the diff report.
StatusOr<Report> DiffTrtEngines(const std::string& baseline, const std::string& candidate,
                                const TrtDiffOptions& options);

}  // namespace sightline
