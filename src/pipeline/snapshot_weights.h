// `analyze --weights-snapshot SNAPSHOT`: the bytes of the weights a PyTorch memory snapshot holds
// at its dump (memory by purpose: analyses/memory), for the floor (AnalyzeOptions::floor): the
// weights a step reads when no model config is given, beside the config's when one is.
// docs/analyses/floor.md, "Without a config".
#pragma once

#include <string>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "report/report.h"

namespace sightline {

// Reads `path` (which must be a PyTorch memory snapshot: InvalidArgument saying what it is
// otherwise, or when no allocation of it is a weight) and gives options.floor.model the weights
// of the device holding the most at the dump (ModelConfig::snapshot_weight_bytes): a copy of the
// config read before, or a model of those weights alone when there is none. Returns the entry for
// the report's files.
StatusOr<InputFile> AddSnapshotWeights(const std::string& path, AnalyzeOptions& options);

}  // namespace sightline
