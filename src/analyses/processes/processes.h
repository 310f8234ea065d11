// The processes of one recorded run (trace.run_processes, from `sightline record`'s process tree):
// each process with its parent, life and CPU time, whether it used CUDA, and how much of its CPU
// time fell while this trace's GPUs were idle within their active span: the multi-process
// pipeline's view (a front end tokenizing or a detokenizer working while the engine's GPU waits).
// Input: one Trace. Units: ns. docs/analyses/processes.md.
#pragma once

#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/common/analysis_context.h"
#include "base/status.h"
#include "base/time_units.h"

namespace sightline {

struct ProcessesOptions {};

// What a process of the run recorded.
enum class ProcessRecording { kThisTrace, kOtherFile, kNone };
const char* ProcessRecordingName(ProcessRecording r);  // "this trace", "another file", "none"

struct ProcessRow {
  int32_t pid = -1, ppid = -1;
  std::string name, command;
  TimeNs start_ns = 0, end_ns = 0;
  bool ended = false;
  DurationNs cpu_ns = 0;
  double cpu_share = 0;  // cpu_ns / life: 1.0 is one core busy all its life
  int64_t max_threads = 0;
  ProcessRecording recording = ProcessRecording::kNone;
  std::string recording_file;
  // CPU time inside the GPU's active span, and the part of it while every GPU of this trace was
  // idle (each sample's CPU time spread evenly over its interval).
  DurationNs cpu_in_span_ns = 0, cpu_while_gpu_idle_ns = 0;
};

struct ProcessesResult {
  std::vector<ProcessRow> processes;          // by start
  int64_t with_cuda = 0;                      // processes that wrote a recording
  TimeNs span_begin_ns = 0, span_end_ns = 0;  // first to last GPU work of this trace
  DurationNs gpu_idle_in_span_ns = 0;         // no GPU of this trace busy, inside the span
};

StatusOr<ProcessesResult> ComputeProcesses(AnalysisContext& context,
                                           const ProcessesOptions& options);

// Section "processes" (only for a trace with its run's process tree).
Status RunProcessesSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
