// An AnalysisContext in one expression, for calling an analysis entry point from a test:
// ComputeOverview(*Ctx(trace), {}). Tests of the analyses and above only (it includes analyses/).
#pragma once

#include <memory>
#include <utility>

#include "analyses/common/analysis_context.h"

namespace sightline::testing {

// A fresh AnalysisContext over `trace` (borrowed: it must outlive the context).
inline std::unique_ptr<AnalysisContext> Ctx(const Trace& trace, AnalyzeOptions options = {}) {
  return std::make_unique<AnalysisContext>(trace, std::move(options));
}

}  // namespace sightline::testing
