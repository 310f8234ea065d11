#include "analyses/analysis.h"

// Each analysis header declares its Run...Section function; add one line here per analysis.

namespace sightline {

const std::vector<AnalysisEntry>& Analyses() {
  static const std::vector<AnalysisEntry> kAnalyses = {
      // {"name", "one-line summary", &RunXSection},
  };
  return kAnalyses;
}

}  // namespace sightline
