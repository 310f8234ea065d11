// The documents of one run besides its traces (serving results, the iteration log, the model's
// config or weights, the eager reference): each read once by its document kind's join
// (analyses/common/document_kind.h), then shared, unchanged, by every trace's AnalysisContext and
// the multi-trace analyses. What the user chose is AnalyzeOptions (analysis.h); what the run read
// is here, as LevelDB keeps its Options to choices.
#pragma once

#include <memory>

#include "facts/facts_inputs.h"

namespace sightline {

struct IterationLog;    // importers/iteration_log/iteration_log.h
struct ModelConfig;     // importers/model_config/model_config.h
struct RequestResults;  // importers/serving_results/request_results.h

// The facts' documents (FactsInputs: the eager reference) and the analyses'; each null when the
// run has none.
struct RunInputs : FactsInputs {
  // Serving results (--requests, or among the inputs): a benchmark's per-request results, read by
  // the serving analysis (serving_metrics.h).
  std::shared_ptr<const RequestResults> requests;
  // The iteration log (--iteration-log, or among the inputs): joined once to each trace's
  // iterations (IterationLogJoinOf, iteration_log/iteration_log_join.h).
  std::shared_ptr<const IterationLog> iteration_log;
  // The model's shapes (--model-config) and the weights a PyTorch memory snapshot held
  // (--weights-snapshot), either or both, joined in either order: the floor's model (floor.h).
  std::shared_ptr<const ModelConfig> model;
};

}  // namespace sightline
