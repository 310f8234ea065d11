// The phases of a run: what came before the steady state of its loop and how long each part took.
// A program engineers run spends seconds to minutes before its first step — the interpreter and
// its imports, building or loading the model, torch.compile compiling, autotuning, CUDA-graph
// capture — and a report about its steps should neither hide that time nor mix it into the steps'
// figures. Phases, in time order: before the trace (the program's start to its first CUDA event,
// from `sightline record`'s process tree), start-up (the trace's first event to the first step),
// warm-up steps, the steady state (first steady step to the last step's end), after the last step.
// Start-up is cut into activities from what the trace holds in bins of up to 100 ms: graph capture,
// autotuning (kernels timed with CUDA events), copies to the GPU, GPU work, compiler processes on
// CPU, host work of the program, idle. Needs the main iteration set (steps found by name or
// inferred). Input: one Trace. Units: ns. docs/analyses/phases.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/common/analysis_context.h"
#include "analyses/phases/first_launches.h"
#include "base/status.h"
#include "base/time_units.h"

namespace sightline {

// What the start-up did at a time, by the first that holds (docs/analyses/phases.md).
enum class StartupActivity : uint8_t {
  kCapture,   // CUDA-graph capture or instantiation
  kAutotune,  // kernels timed against each other with CUDA events (Triton, cuBLASLt, TensorRT)
  kLoad,      // host-to-device copies of at least kLoadBytesPerBin (weights to the GPU)
  kGpu,       // other GPU work (building the model, first forward passes)
  kCompile,   // compiler processes of the run on CPU (torch.compile's workers, ptxas, gcc, ...)
  kHost,      // the program on CPU, the GPU idle (tracing, in-process compilation, loading)
  kIdle,      // the GPU idle and, by the process tree, little CPU
  kUnknown,   // the GPU idle and no CPU data to say what the host did
};
inline constexpr int kStartupActivities = 8;
const char* StartupActivityName(StartupActivity a);  // "graph capture", "autotuning", ...

// A stretch of start-up spent on one activity (after short stretches are folded into neighbours).
struct StartupSegment {
  StartupActivity activity = StartupActivity::kUnknown;
  TimeNs start_ns = 0, end_ns = 0;
  DurationNs gpu_busy_ns = 0;      // union of GPU work inside it
  int64_t kernels = 0;             // kernels starting inside it
  int64_t timing_calls = 0;        // cudaEventElapsedTime / cuEventElapsedTime calls
  int64_t captures = 0;            // stream captures ending inside it
  int64_t htod_bytes = 0;          // host-to-device bytes copied
  DurationNs compiler_cpu_ns = 0;  // CPU time of compiler processes (process tree)
  DurationNs program_cpu_ns = 0;   // CPU time of the traced processes (process tree)
};

// The compiler processes of a run, by /proc name or command line (docs/analyses/phases.md).
bool IsCompilerProcess(std::string_view name, std::string_view command);

struct PhasesResult {
  bool has_steps = false;  // false: no iteration set, nothing else is set
  std::string steps;       // the main set's name ("ProfilerStep#N", "cudaGraphLaunch ...")
  // Before the trace: the program's start (its process tree) to the trace's first event; -1
  // without a process tree.
  DurationNs before_trace_ns = -1;
  TimeNs trace_begin_ns = 0, trace_end_ns = 0;
  TimeNs first_step_ns = 0;     // start of the first step (warm-up included)
  TimeNs first_steady_ns = 0;   // start of the first step after the warm-up
  TimeNs last_step_end_ns = 0;  // end of the last step
  int64_t warmup_steps = 0, steps_total = 0;
  DurationNs bin_ns = 0;                 // the bin width start-up was classified in
  int64_t fold_bins = 0;                 // stretches shorter than this many bins were folded
  bool cpu_known = false;                // a process tree with CPU samples was there
  std::vector<StartupSegment> segments;  // start-up, in time order
  DurationNs activity_ns[kStartupActivities] = {};  // summed over the segments
  int64_t compiler_processes = 0;   // compiler processes of the run that started before the steps
  DurationNs compiler_cpu_ns = 0;   // their CPU time in start-up
  FirstLaunchLoads first_launches;  // kernels' first launches that loaded their code

  DurationNs startup_ns() const { return first_step_ns - trace_begin_ns; }
  DurationNs warmup_ns() const { return first_steady_ns - first_step_ns; }
  DurationNs steady_ns() const { return last_step_end_ns - first_steady_ns; }
  DurationNs after_ns() const { return trace_end_ns - last_step_end_ns; }
  DurationNs activity(StartupActivity a) const { return activity_ns[static_cast<int>(a)]; }
};

// Host-to-device bytes in one bin from which the bin counts as loading (weights to the GPU).
inline constexpr int64_t kLoadBytesPerBin = 8 << 20;
// Timing calls in one bin from which the bin counts as autotuning.
inline constexpr int64_t kTimingCallsPerBin = 3;

StatusOr<PhasesResult> ComputePhases(AnalysisContext& context);
StatusOr<const PhasesResult*> CachedPhases(AnalysisContext& context);

// Section "phases" (only for a trace with steps and a start-up before them).
Status RunPhasesSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
