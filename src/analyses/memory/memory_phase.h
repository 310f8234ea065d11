// When an allocation was made, by the phases of the run (docs/metrics.md, "Memory by phase"):
// inside a CUDA-graph capture (its pool), before the first step (start-up: building or loading
// the model, caches, workspaces), in the warm-up steps, in the steady steps, after the last step.
// Traces whose memory events carry no stacks (nsys's and the recorder's CUDA calls) cannot say
// what memory is for; when it was allocated is the nearest they tell. Needs the main iteration
// set. Input: one AnalysisContext. Units: ns.
#pragma once

#include <cstdint>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "base/time_units.h"

namespace sightline {

enum class MemoryPhase : uint8_t { kCapture, kStartup, kWarmup, kSteps, kAfter, kBefore };
const char* MemoryPhaseLabel(MemoryPhase p);  // "graph capture", "start-up (before the steps)", ...

class MemoryPhases {
 public:
  explicit MemoryPhases(AnalysisContext& context);
  // False without steps: then no allocation has a phase.
  bool known() const { return known_; }
  // The phase of an allocation made at `t` on thread (pid, tid); tid -1: any thread of pid.
  MemoryPhase At(int32_t pid, int32_t tid, TimeNs t) const;

 private:
  struct Window {
    int32_t pid, tid;
    TimeNs begin_ns, end_ns;
  };
  bool known_ = false;
  TimeNs first_step_ns_ = 0, first_steady_ns_ = 0, last_end_ns_ = 0;
  std::vector<Window> captures_;  // by begin
};

}  // namespace sightline
