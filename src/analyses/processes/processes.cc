#include "analyses/processes/processes.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyses/processes/cpu_spread.h"
#include "base/file_io.h"
#include "facts/intervals.h"

namespace sightline {

const char* ProcessRecordingName(ProcessRecording r) {
  switch (r) {
    case ProcessRecording::kThisTrace:
      return "this trace";
    case ProcessRecording::kOtherFile:
      return "another file";
    case ProcessRecording::kNone:
      break;
  }
  return "none";
}

StatusOr<ProcessesResult> ComputeProcesses(AnalysisContext& context, const ProcessesOptions&) {
  const Trace& trace = context.trace();
  ProcessesResult r;
  // Every GPU of the trace together: idle means none of them had work.
  std::vector<Interval> busy;
  for (int32_t device : context.gpu().GpuDevices()) {
    const std::vector<Interval>& b = context.gpu().Busy(device);
    busy.insert(busy.end(), b.begin(), b.end());
  }
  busy = MergeIntervals(std::move(busy));
  if (!busy.empty()) {
    r.span_begin_ns = busy.front().start_ns;
    r.span_end_ns = busy.back().end_ns;
    r.gpu_idle_in_span_ns = (r.span_end_ns - r.span_begin_ns) - TotalLength(busy);
  }
  const std::string_view self = WithoutCompressionSuffix(FileNameOf(trace.source.path));
  for (const RunProcess& p : trace.run_processes) {
    ProcessRow& row = r.processes.emplace_back();
    row.pid = p.pid;
    row.ppid = p.ppid;
    row.name = p.name;
    row.command = p.command;
    row.start_ns = p.start_ns;
    row.end_ns = p.end_ns;
    row.ended = p.ended;
    row.cpu_ns = p.cpu_ns;
    row.max_threads = p.max_threads;
    const DurationNs life = p.end_ns - p.start_ns;
    row.cpu_share = life > 0 ? static_cast<double>(p.cpu_ns) / static_cast<double>(life) : 0;
    row.recording_file = p.recording;
    if (!p.recording.empty()) {
      ++r.with_cuda;
      row.recording = FileNameOf(p.recording) == self ? ProcessRecording::kThisTrace
                                                      : ProcessRecording::kOtherFile;
    }
    if (busy.empty()) continue;
    const CpuWithin cpu = CpuOfProcessWithin(p, r.span_begin_ns, r.span_end_ns, busy);
    row.cpu_in_span_ns = cpu.cpu_ns;
    row.cpu_while_gpu_idle_ns = cpu.while_idle_ns;
  }
  return r;
}

Status RunProcessesSection(AnalysisContext& context, int input, Report& report) {
  if (context.trace().run_processes.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(ProcessesResult r, ComputeProcesses(context, ProcessesOptions{}));
  Section& s = report.AddSection("processes", "Processes of the run", input);
  s.AddFact("processes", "Processes the program started (itself included)",
            static_cast<int64_t>(r.processes.size()), Unit::kCount);
  s.AddFact("with_cuda", "Of them with a recording (CUDA, or NVTX alone)", r.with_cuda,
            Unit::kCount);
  if (r.span_end_ns > r.span_begin_ns) {
    s.AddFact("gpu_span_ns", "GPU active span of this trace (first to last GPU work)",
              r.span_end_ns - r.span_begin_ns, Unit::kDurationNs);
    s.AddFact("gpu_idle_in_span_ns", "GPU idle inside it", r.gpu_idle_in_span_ns,
              Unit::kDurationNs);
  }
  // Times from the program's start: its processes begin before the trace's first CUDA event.
  const TimeNs run_start = r.processes.empty() ? 0 : r.processes.front().start_ns;
  const TimeNs trace_begin = context.trace().begin_ns();
  s.AddFact("trace_begin_after_start_ns", "This trace's first event, after the program started",
            std::max<DurationNs>(0, trace_begin - run_start), Unit::kDurationNs);
  Table& t = s.AddTable("processes", "Every process of the run, by start",
                        {{"pid", "PID", Unit::kNumber},
                         {"ppid", "Parent", Unit::kNumber},
                         {"name", "Name", Unit::kText},
                         {"recording", "CUDA recording", Unit::kText},
                         {"start_after_program_ns", "Start", Unit::kDurationNs},
                         {"life_ns", "Life", Unit::kDurationNs},
                         {"cpu_ns", "CPU time", Unit::kDurationNs},
                         {"cpu_share_pct", "CPU / life", Unit::kPercent},
                         {"cpu_in_span_ns", "CPU in GPU span", Unit::kDurationNs},
                         {"cpu_while_gpu_idle_ns", "CPU while GPU idle", Unit::kDurationNs},
                         {"max_threads", "Threads", Unit::kCount},
                         {"command", "Command", Unit::kText, /*optional=*/true}});
  for (const ProcessRow& p : r.processes) {
    t.rows.push_back({int64_t{p.pid}, int64_t{p.ppid}, p.name,
                      std::string(ProcessRecordingName(p.recording)), p.start_ns - run_start,
                      p.end_ns - p.start_ns, p.cpu_ns, 100.0 * p.cpu_share, p.cpu_in_span_ns,
                      p.cpu_while_gpu_idle_ns, p.max_threads, p.command});
  }
  t.note =
      "Start: from the program's start. From `sightline record`'s process tree "
      "(NAME.processes.json): /proc read every 20 ms "
      "(processes that lived less may be missed), CPU time per process every 100 ms in 10 ms "
      "ticks. CPU while GPU idle: each sample's CPU time spread evenly over its interval, the "
      "part when no GPU of this trace had work, inside the GPU active span.";
  // Which host-only process (a pipeline stage: front end, scheduler, detokenizer) worked most
  // while this trace's GPU waited. Processes with CUDA recordings of their own are left out: a
  // GPU worker spinning in its own synchronize is busy for its GPU, not holding this one up.
  const ProcessRow* top = nullptr;
  for (const ProcessRow& p : r.processes) {
    if (p.recording != ProcessRecording::kNone) continue;
    if (top == nullptr || p.cpu_while_gpu_idle_ns > top->cpu_while_gpu_idle_ns) top = &p;
  }
  if (top != nullptr && top->cpu_while_gpu_idle_ns > 0 && r.gpu_idle_in_span_ns > 0) {
    s.notes.push_back(fmt::format(
        "While this trace's GPU was idle inside its active span ({:.3f} s), process {} ({}) used "
        "{:.3f} s of CPU: the busiest process without CUDA then. A pipeline stage in another "
        "process (tokenizing, scheduling, detokenizing) that the GPU waits on shows here.",
        r.gpu_idle_in_span_ns / 1e9, top->pid, top->name, top->cpu_while_gpu_idle_ns / 1e9));
  }
  return Status::Ok();
}

}  // namespace sightline
