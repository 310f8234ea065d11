#include "analyses/memory/memory_phase.h"

#include <algorithm>

#include "facts/graph_replays.h"
#include "facts/iterations.h"

namespace sightline {

const char* MemoryPhaseLabel(MemoryPhase p) {
  switch (p) {
    case MemoryPhase::kCapture:
      return "graph capture";
    case MemoryPhase::kStartup:
      return "start-up (before the steps)";
    case MemoryPhase::kWarmup:
      return "warm-up steps";
    case MemoryPhase::kSteps:
      return "steady steps";
    case MemoryPhase::kAfter:
      return "after the last step";
    case MemoryPhase::kBefore:
      return "before the events";
  }
  return "?";
}

MemoryPhases::MemoryPhases(AnalysisContext& context) {
  const IterationSet* set = context.loop().MainSet();
  if (set == nullptr || set->iterations.empty()) return;
  known_ = true;
  first_step_ns_ = set->iterations.front().start_ns;
  const size_t warmup = std::min(set->iterations.size(), static_cast<size_t>(set->warmup));
  first_steady_ns_ = warmup < set->iterations.size() ? set->iterations[warmup].start_ns
                                                     : set->iterations.back().end_ns;
  for (const Iteration& it : set->iterations) last_end_ns_ = std::max(last_end_ns_, it.end_ns);
  for (const GraphCapture& c : context.graphs().Replays().captures) {
    captures_.push_back({c.pid, c.tid, c.begin_ns, c.end_ns});
  }
}

MemoryPhase MemoryPhases::At(int32_t pid, int32_t tid, TimeNs t) const {
  for (const Window& w : captures_) {
    if (w.begin_ns > t) break;
    if (t < w.end_ns && w.pid == pid && (tid < 0 || w.tid == tid)) return MemoryPhase::kCapture;
  }
  if (t < first_step_ns_) return MemoryPhase::kStartup;
  if (t < first_steady_ns_) return MemoryPhase::kWarmup;
  if (t < last_end_ns_) return MemoryPhase::kSteps;
  return MemoryPhase::kAfter;
}

}  // namespace sightline
