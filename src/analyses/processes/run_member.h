// One recording of a run, reduced to what the run analysis (run_view.h) needs while the pipeline
// has its trace: which run it is of, its clock against the run's, its GPU busy time and steps, and
// the run's processes, all on the run's clock (CLOCK_MONOTONIC of the host). Versioned binary form
// for the rank workers (pipeline/rank_parts.h). Units: ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "base/status.h"
#include "base/time_units.h"
#include "facts/intervals.h"
#include "model/run_processes.h"

namespace sightline {

struct RunMember {
  std::string label;  // the input's label
  std::string file;   // the recording's file name
  int input = -1;     // index into Report::inputs
  // Which run (RunOfTrace::key(): host, the run's start, its root process); "" when the recording
  // has no process tree beside it: it is no member of a run.
  std::string run_key;
  std::string document;  // the processes document's path
  std::string host;
  int32_t pid = -1;  // the process that wrote the recording
  int32_t rank = -1, world_size = 0;
  // The recording's clock minus CLOCK_MONOTONIC, at its start and end (RunOfTrace).
  DurationNs trace_minus_monotonic_ns = 0, trace_minus_monotonic_at_end_ns = 0;
  bool has_end = false;
  // GPU work, on CLOCK_MONOTONIC.
  int64_t kernels = 0, memops = 0, comm_kernels = 0;
  std::vector<int32_t> devices;
  std::vector<Interval> busy;  // union over its devices
  // Its steps (the iterations fact: step ranges, graph replays or synchronize cadence), each
  // step's wall time on CLOCK_MONOTONIC; empty when none were found.
  std::string steps_by;  // "ranges", "graph replays", ...
  int64_t warmup_steps = 0;
  std::vector<Interval> steps;
  // The run's processes from the document beside the recording, on CLOCK_MONOTONIC.
  TimeNs run_start_ns = 0, run_end_ns = 0;
  int32_t root_pid = -1;
  std::vector<RunProcess> processes;
};

// The member for the context's trace (label and input as the pipeline names them).
StatusOr<RunMember> ComputeRunMember(AnalysisContext& context, const std::string& label, int input);

std::string EncodeRunMember(const RunMember& member);
StatusOr<RunMember> DecodeRunMember(const std::string& blob);

}  // namespace sightline
