// The processes of one run seen together on one clock: the recordings `sightline record` wrote for
// the CUDA processes of one program (run.slrec, run.PID.slrec) with the run's process tree
// (run.processes.json), each process a row (its CUDA work, steps and CPU time), and the run's time
// cut into windows saying which processes were on CPU and how busy the GPUs were. Recordings are
// of one run when the process trees beside them are the same run's (host, start, root process);
// each is put on the host's CLOCK_MONOTONIC through the offset its process record holds.
// Input: one RunMember per recording (run_member.h). Units: ns. docs/analyses/processes.md, "The
// run on one clock".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/processes/run_member.h"
#include "base/status.h"
#include "base/time_units.h"
#include "facts/intervals.h"
#include "report/report.h"

namespace sightline {

struct RunViewOptions {
  int max_windows = 40;  // windows are whole CPU sample periods, lengthened to keep to this many
  // Clocks that differ by more than this between recordings are said to disagree (a note): on one
  // host their offsets to CLOCK_MONOTONIC agree to well under a microsecond.
  DurationNs clock_tolerance_ns = 1'000'000;
};

// One process of the run.
struct RunProcessRow {
  RunProcess process;  // on CLOCK_MONOTONIC
  // Its CUDA recording: the file name it wrote ("" when it never initialised CUDA) and the given
  // recording that is it (index into RunView::members; -1 when that file is not among the inputs).
  std::string recording_file;
  int member = -1;
  int64_t kernels = 0, memops = 0;
  DurationNs gpu_busy_ns = 0;         // union over its devices, whole recording
  DurationNs gpu_busy_steady_ns = 0;  // of it inside the steady state
  int64_t steps = 0;
  std::string steps_by;
  // CPU time inside the steady state, and the part when no given GPU had work (each sample's CPU
  // time spread evenly over its interval: cpu_spread.h).
  DurationNs cpu_steady_ns = 0, cpu_while_idle_ns = 0;
  bool has_cuda() const { return !recording_file.empty(); }
};

// A window of the run's time: the GPUs' busy time and each process's CPU time in it.
struct RunWindow {
  TimeNs start_ns = 0, end_ns = 0;
  DurationNs gpu_busy_ns = 0;              // any given GPU busy
  std::vector<DurationNs> member_busy_ns;  // per given recording (RunView::members order)
  int64_t steps = 0;                       // steps of the reference recording starting in it
  std::vector<DurationNs> cpu_ns;          // per process (RunView::processes order)
};

struct RunView {
  std::string document, host;
  TimeNs program_start_ns = 0, program_end_ns = 0;  // the run as the document states it
  std::vector<RunMember> members;                   // the given recordings of this run
  std::vector<RunProcessRow> processes;             // by start
  std::vector<std::string> missing;  // recordings the run wrote that are not among the inputs
  // Clocks: each recording's offset to CLOCK_MONOTONIC; how far they differ between recordings
  // (at their starts) and how far one drifts from its start to its end.
  DurationNs clock_spread_ns = 0, clock_drift_ns = 0;
  // The data's own check: the median |difference| of step starts between recordings with as many
  // steps as each other (processes stepping together, as tensor-parallel workers do); -1 when no
  // two recordings have equal step counts.
  DurationNs step_start_skew_ns = -1;
  int64_t step_pairs = 0;
  // First to last GPU work of the given recordings, and the time no given GPU had work in it.
  TimeNs gpu_begin_ns = 0, gpu_end_ns = 0;
  DurationNs gpu_idle_in_span_ns = 0;
  // The steady state: first step start to last step end over the recordings with steps (after
  // their warm-up steps); the GPU span when none has steps.
  TimeNs steady_begin_ns = 0, steady_end_ns = 0;
  bool steady_from_steps = false;
  DurationNs idle_in_steady_ns = 0;  // no given GPU busy
  int reference = -1;                // the member whose steps the windows count: most GPU busy
  DurationNs sample_period_ns = 0;   // the CPU samples' median interval
  DurationNs window_ns = 0;
  std::vector<RunWindow> windows;  // over the GPU span
  // Not ranks of a job: recordings without rank numbers and communication kernels (the ranks
  // analysis leaves them out; ranks_analysis.cc).
  bool not_ranks = false;
};

// The runs among the inputs: one view per run of which at least one recording was given, in the
// order of their first recording. Members without a run are left out.
struct RunsResult {
  std::vector<RunView> runs;
};

StatusOr<RunsResult> ComputeRuns(std::vector<RunMember> members,
                                 const RunViewOptions& options = {});

// Section "run_processes" (input -1) for each run with two or more recordings given.
void AddRunSections(const RunsResult& runs, Report& report);

// Registry entry "run_processes" (a TraceSet of kind kRanks; pipeline/registry.cc): the run
// sections and the RunsResult the rule other_process_busy reads.
std::unique_ptr<MultiTraceAnalysis> CreateRunAnalysis(const AnalyzeOptions& options,
                                                      const RunInputs& inputs);

}  // namespace sightline
