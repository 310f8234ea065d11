// The floor per layer (floor.h, FloorResult::layers): each kernel of a family's steps is placed in
// the part of the model that the trace's ranges name around it (its launch, or its graph node's
// capture), and each part's GPU time per step is put beside the part's own floor (step_cost.h,
// LayerCostOf and the others). docs/analyses/floor.md, "Per layer".
#pragma once

#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/floor/floor.h"
#include "importers/model_config/model_config.h"

namespace sightline {

// Fills r.layers (and layers_family, family_kernels, placed_*) for the steps of families[0] (the
// family with the most steady time), and r.other_layers for the other families, in their order,
// where the trace names layers; adds a note to r otherwise.
void AddFloorLayers(AnalysisContext& context, const ModelConfig& config,
                    const std::vector<std::vector<const FloorStep*>>& families, FloorResult& r);

}  // namespace sightline
