// A multi-trace analysis that keeps only a compact, serializable state per member (analysis.h,
// MultiTraceAnalysis::Reducible): the ranks, the processes of one run, serving. Its Add is Reduce
// then AddReduced, so that one thread, several, and MPI processes (pipeline/rank_parts.h) all make
// the same report; it writes only those two.
#pragma once

#include <memory>
#include <string>

#include "analyses/common/analysis.h"
#include "base/status.h"

namespace sightline {

class ReducibleAnalysis : public MultiTraceAnalysis {
 public:
  Status Add(const std::shared_ptr<AnalysisContext>& context, const TraceSetMember& member) final {
    ASSIGN_OR_RETURN(std::string blob, Reduce(context, member));
    return AddReduced(blob, member);
  }
  bool Reducible() const final { return true; }
  StatusOr<std::string> Reduce(const std::shared_ptr<AnalysisContext>& context,
                               const TraceSetMember& member) override = 0;
  Status AddReduced(const std::string& blob, const TraceSetMember& member) override = 0;
};

}  // namespace sightline
