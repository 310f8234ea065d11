// Kernels' first launches that loaded their code: with lazy module loading (CUDA_MODULE_LOADING=
// LAZY, the default since CUDA 12.2) the driver loads a kernel's module inside the first call that
// launches it, so that call takes milliseconds where launches take microseconds; a program's first
// steps launch hundreds of kernels for the first time (a module loading storm). Found from the
// launch calls' own durations, in any trace that links kernels to their launches: a kernel's first
// launch in its process (by name, graph launches aside) that took longer than
// max(kLoadingLaunchNs, kLoadingLaunchFactor x the median launch call). Input: one Trace and the
// run's phase bounds. Units: ns. docs/analyses/phases.md.
#pragma once

#include <cstdint>

#include "base/time_units.h"
#include "model/trace.h"

namespace sightline {

inline constexpr DurationNs kLoadingLaunchNs = 100'000;
inline constexpr int64_t kLoadingLaunchFactor = 20;

struct FirstLaunchLoads {
  int64_t first_launches = 0;       // kernels launched for the first time (by process and name)
  int64_t loading = 0;              // of them, those that took long enough to have loaded code
  DurationNs loading_ns = 0;        // their summed call time
  DurationNs median_launch_ns = 0;  // the median launch call's time (the yardstick)
  // Their time by phase: before the first step, in the warm-up steps, in the steady steps and
  // after.
  DurationNs startup_ns = 0, warmup_ns = 0, steady_ns = 0;
  int64_t startup = 0, warmup = 0, steady = 0;
};

// `first_step_ns` / `first_steady_ns`: the phases' bounds (PhasesResult).
FirstLaunchLoads FindFirstLaunchLoads(const Trace& trace, TimeNs first_step_ns,
                                      TimeNs first_steady_ns);

}  // namespace sightline
