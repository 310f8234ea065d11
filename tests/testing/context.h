// An AnalysisContext in one expression, for calling an analysis entry point from a test:
// ComputeOverview(*Ctx(trace), {}). Tests of the analyses and above only (it includes analyses/).
#pragma once

#include <memory>
#include <utility>

#include "analyses/common/analysis_context.h"

namespace sightline::testing {

// A fresh AnalysisContext over `trace` (borrowed: it must outlive the context), with the run's
// other documents in `inputs` (an iteration log, a model config, ...).
inline std::unique_ptr<AnalysisContext> Ctx(const Trace& trace, AnalyzeOptions options = {},
                                            RunInputs inputs = {}) {
  return std::make_unique<AnalysisContext>(trace, std::move(options), std::move(inputs));
}

}  // namespace sightline::testing
