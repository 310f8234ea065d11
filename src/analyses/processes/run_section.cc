// The section "run_processes" (run_view.h, AddRunSections): the run's processes as rows on one
// clock, and its time in windows.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "analyses/common/percent.h"
#include "analyses/processes/run_view.h"

namespace sightline {
namespace {

// A share of one core, or of a window's time, in percent.

std::string RecordingCell(const RunProcessRow& r) {
  if (!r.has_cuda()) return "none";
  return r.member >= 0 ? r.recording_file : r.recording_file + " (not given)";
}

void AddProcessTable(const RunView& v, Section& s) {
  Table& t = s.AddTable("processes", "Every process of the run, by start",
                        {{"pid", "PID", Unit::kNumber},
                         {"ppid", "Parent", Unit::kNumber},
                         {"name", "Name", Unit::kText},
                         {"recording", "CUDA recording", Unit::kText},
                         {"kernels", "Kernels", Unit::kCount},
                         {"gpu_busy_ns", "GPU busy", Unit::kDurationNs},
                         {"gpu_busy_steady_ns", "GPU busy, steady", Unit::kDurationNs},
                         {"steps", "Steps", Unit::kCount},
                         {"steps_by", "Found by", Unit::kText},
                         {"cpu_ns", "CPU time", Unit::kDurationNs},
                         {"cpu_steady_ns", "CPU, steady", Unit::kDurationNs},
                         {"cpu_while_gpu_idle_ns", "CPU while GPUs idle", Unit::kDurationNs},
                         {"start_after_program_ns", "Start", Unit::kDurationNs},
                         {"life_ns", "Life", Unit::kDurationNs},
                         {"command", "Command", Unit::kText, /*optional=*/true}});
  for (const RunProcessRow& r : v.processes) {
    const RunProcess& p = r.process;
    const bool given = r.member >= 0;
    t.rows.push_back(
        {int64_t{p.pid}, int64_t{p.ppid}, p.name, RecordingCell(r),
         given ? Value(r.kernels) : Value(), given ? Value(r.gpu_busy_ns) : Value(),
         given ? Value(r.gpu_busy_steady_ns) : Value(), given ? Value(r.steps) : Value(),
         given ? Value(r.steps_by.empty() ? std::string("none found") : r.steps_by) : Value(),
         p.cpu_ns, r.cpu_steady_ns, r.cpu_while_idle_ns, p.start_ns - v.program_start_ns,
         p.end_ns - p.start_ns, p.command});
  }
  t.note =
      "All on one clock (the host's CLOCK_MONOTONIC); Start: from the program's start. GPU busy: "
      "the union of the recording's kernels and memory operations. Steps: the iterations each "
      "recording shows (step ranges, else one CUDA graph replay per step, else the synchronize "
      "cadence). Steady: from the first step after the warm-up to the last step's end, over the "
      "recordings with steps. CPU: from `sightline record`'s samples (every ~100 ms), each "
      "sample's CPU time spread evenly over its interval; CPU while GPUs idle: the part when no "
      "given recording's GPU had work.";
}

void AddWindowTable(const RunView& v, Section& s) {
  if (v.windows.empty()) return;
  Table& t = s.AddTable("windows", "The GPU span in windows: GPU busy and who was on CPU",
                        {{"start_after_program_ns", "Start", Unit::kDurationNs},
                         {"length_ns", "Length", Unit::kDurationNs},
                         {"steps", "Steps", Unit::kCount},
                         {"gpu_busy_pct", "GPU busy", Unit::kPercent},
                         {"gpu_busy_by_process", "GPU busy by process", Unit::kText},
                         {"on_cpu", "On CPU (share of one core)", Unit::kText}});
  for (const RunWindow& w : v.windows) {
    const DurationNs len = w.end_ns - w.start_ns;
    std::string by_process;
    for (size_t i = 0; i < v.members.size(); ++i) {
      by_process += fmt::format("{}{} {:.1f}%", by_process.empty() ? "" : ", ", v.members[i].pid,
                                Pct(w.member_busy_ns[i], len));
    }
    std::vector<size_t> order(v.processes.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return w.cpu_ns[a] > w.cpu_ns[b]; });
    std::string on_cpu;
    for (size_t i : order) {
      if (Pct(w.cpu_ns[i], len) < 1.0) break;  // under 1% of a core: not on CPU to speak of
      on_cpu += fmt::format("{}{} {:.0f}%", on_cpu.empty() ? "" : ", ", v.processes[i].process.pid,
                            Pct(w.cpu_ns[i], len));
    }
    t.rows.push_back({w.start_ns - v.program_start_ns, len, w.steps, Pct(w.gpu_busy_ns, len),
                      by_process, on_cpu.empty() ? std::string("none") : on_cpu});
  }
  const std::string steps_of =
      v.reference >= 0 ? v.members[static_cast<size_t>(v.reference)].file : std::string("-");
  t.note = fmt::format(
      "Windows of {} from the first GPU work of the run to its last: no shorter than the CPU "
      "samples' period ({}), since what a process did inside one sample is not known (its CPU "
      "time is spread evenly). Steps: those of {} (the busiest recording with steps) starting in "
      "the window. GPU busy: any given recording's GPU; by process: each recording's own. On "
      "CPU: processes over 1% of one core, busiest first (100% is one core all the window).",
      FormatDuration(v.window_ns), FormatDuration(v.sample_period_ns), steps_of);
}

void AddRunSection(const RunView& v, Report& report) {
  Section& s = report.AddSection("run_processes", "The run's processes on one clock", -1);
  int64_t recordings = 0;
  for (const RunProcessRow& r : v.processes) recordings += r.has_cuda() ? 1 : 0;
  s.AddFact("processes", "Processes of the run", static_cast<int64_t>(v.processes.size()),
            Unit::kCount);
  s.AddFact("recordings", "Of them wrote a CUDA recording", recordings, Unit::kCount);
  s.AddFact("recordings_given", "Recordings given", static_cast<int64_t>(v.members.size()),
            Unit::kCount);
  s.AddFact("clock", "Clock",
            fmt::format("CLOCK_MONOTONIC of {}: each recording's clock less the offset its "
                        "process record holds",
                        v.host.empty() ? std::string("the host") : v.host));
  s.AddFact("clock_spread_ns", "Recordings' offsets to it differ by at most", v.clock_spread_ns,
            Unit::kDurationNs);
  s.AddFact("clock_drift_ns", "Largest drift of one recording's offset, start to end",
            v.clock_drift_ns, Unit::kDurationNs);
  if (v.step_start_skew_ns >= 0) {
    s.AddFact("step_start_skew_ns",
              "Median difference of step starts (recordings with equal steps)",
              v.step_start_skew_ns, Unit::kDurationNs);
  }
  if (v.gpu_end_ns > v.gpu_begin_ns) {
    s.AddFact("gpu_span_start_ns", "First GPU work, after the program started",
              v.gpu_begin_ns - v.program_start_ns, Unit::kDurationNs);
    s.AddFact("gpu_span_ns", "GPU span (first to last GPU work of the recordings)",
              v.gpu_end_ns - v.gpu_begin_ns, Unit::kDurationNs);
    s.AddFact("gpu_idle_in_span_ns", "No GPU busy inside it", v.gpu_idle_in_span_ns,
              Unit::kDurationNs);
    const DurationNs steady = v.steady_end_ns - v.steady_begin_ns;
    s.AddFact("steady_from", "Steady state from",
              v.steady_from_steps ? "the recordings' steps" : "the GPU span (no steps found)");
    s.AddFact("steady_start_ns", "Steady state starts, after the program started",
              v.steady_begin_ns - v.program_start_ns, Unit::kDurationNs);
    s.AddFact("steady_ns", "Steady state", steady, Unit::kDurationNs);
    s.AddFact("steady_gpu_idle_ns", "No GPU busy inside it", v.idle_in_steady_ns,
              Unit::kDurationNs);
    s.AddFact("steady_gpu_idle_pct", "Its share", Pct(v.idle_in_steady_ns, steady), Unit::kPercent);
  }
  AddProcessTable(v, s);
  AddWindowTable(v, s);
  if (v.not_ranks) {
    s.notes.push_back(
        "These recordings are processes of one program, not the ranks of a distributed job: none "
        "carries a rank number and none has communication kernels, so there is no ranks section.");
  }
  if (!v.missing.empty()) {
    std::string files;
    for (const std::string& f : v.missing) files += (files.empty() ? "" : ", ") + f;
    s.notes.push_back(fmt::format(
        "The run also wrote {}, not among the inputs: its GPU work is not counted here (GPU busy "
        "and idle are the given recordings' GPUs); give every recording of the run, or its "
        "folder.",
        files));
  }
  if (v.clock_spread_ns > RunViewOptions{}.clock_tolerance_ns) {
    s.notes.push_back(fmt::format(
        "The recordings' clocks differ by {} against CLOCK_MONOTONIC (on one host they agree to "
        "well under a microsecond): they were put on CLOCK_MONOTONIC each with its own offset.",
        FormatDuration(v.clock_spread_ns)));
  }
}

}  // namespace

void AddRunSections(const RunsResult& runs, Report& report) {
  for (const RunView& v : runs.runs) {
    if (v.members.size() >= 2) AddRunSection(v, report);
  }
}

}  // namespace sightline
