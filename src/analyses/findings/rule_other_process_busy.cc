// Rule other_process_busy: in the steady state of a recorded run, the GPUs of its recordings sit
// idle while a process of the run that has no CUDA (a front end tokenizing, a detokenizer, an
// engine core scheduling for its workers) is on CPU: the multi-process pipeline's stall. Runs once
// over all inputs on the run analysis (analyses/processes/run_view.h), for a run with any number
// of its recordings given. docs/analyses/findings.md, "other_process_busy".
#include <fmt/format.h>

#include <algorithm>

#include "analyses/findings/findings.h"
#include "analyses/processes/run_view.h"

namespace sightline {
namespace {

constexpr double kMinIdleShare = 0.2;  // of the steady state with no given GPU busy
constexpr DurationNs kMinIdleNs = 1'000'000;
constexpr double kMinCoreShare = 0.1;  // the process on CPU at least this share of the idle time
constexpr DurationNs kMinCpuNs = 1'000'000;
constexpr size_t kOthersListed = 3;

std::string Who(const RunProcessRow& r) {
  std::string command = r.process.command;
  constexpr size_t kMax = 80;
  if (command.size() > kMax) command = command.substr(0, kMax - 3) + "...";
  return fmt::format("process {} ({}, child of {}: {})", r.process.pid, r.process.name,
                     r.process.ppid, command);
}

void RuleOnRun(const RunView& v, std::vector<Finding>& out) {
  const DurationNs steady = v.steady_end_ns - v.steady_begin_ns;
  const DurationNs idle = v.idle_in_steady_ns;
  if (steady <= 0 || idle < kMinIdleNs || idle < kMinIdleShare * static_cast<double>(steady)) {
    return;
  }
  // Processes without CUDA, most CPU while the GPUs were idle first. A process with a recording
  // of its own is left out even when that file is not given: a GPU worker spinning in its own
  // synchronize is busy for its GPU, not holding the others up.
  std::vector<const RunProcessRow*> rows;
  for (const RunProcessRow& r : v.processes) {
    if (!r.has_cuda() && r.cpu_while_idle_ns > 0) rows.push_back(&r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const RunProcessRow* a, const RunProcessRow* b) {
    return a->cpu_while_idle_ns > b->cpu_while_idle_ns;
  });
  if (rows.empty()) return;
  const RunProcessRow& top = *rows[0];
  const double core_share = static_cast<double>(top.cpu_while_idle_ns) / static_cast<double>(idle);
  if (top.cpu_while_idle_ns < kMinCpuNs || core_share < kMinCoreShare) return;

  Finding f;
  f.id = "other_process_busy";
  // A coincidence in time, measured with samples of ~100 ms: never more than medium.
  f.severity = core_share >= 0.5 && idle >= 0.5 * static_cast<double>(steady) ? Severity::kMedium
                                                                              : Severity::kLow;
  f.title = fmt::format(
      "The GPUs sat idle {} of the steady state ({}) while process {} ({}), which has no CUDA, "
      "was on CPU for about {} of that time",
      FormatDuration(idle), Percent(idle, steady), top.process.pid, top.process.name,
      FormatDuration(top.cpu_while_idle_ns));
  f.evidence.push_back({"steady_ns", "Steady state", steady, Unit::kDurationNs});
  f.evidence.push_back({"steady_start_ns", "It starts, after the program started",
                        v.steady_begin_ns - v.program_start_ns, Unit::kDurationNs});
  f.evidence.push_back({"gpu_idle_ns", "No given GPU busy in it", idle, Unit::kDurationNs});
  f.evidence.push_back({"gpu_idle_pct", "Idle share",
                        100.0 * static_cast<double>(idle) / static_cast<double>(steady),
                        Unit::kPercent});
  f.evidence.push_back({"pid", "Process", int64_t{top.process.pid}, Unit::kNumber});
  f.evidence.push_back(
      {"cpu_steady_ns", "Its CPU time in the steady state", top.cpu_steady_ns, Unit::kDurationNs});
  f.evidence.push_back({"cpu_while_idle_ns", "Of it while no GPU was busy", top.cpu_while_idle_ns,
                        Unit::kDurationNs});
  f.evidence.push_back({"core_share_pct", "Its share of one core while the GPUs were idle",
                        100.0 * core_share, Unit::kPercent});
  f.evidence.push_back(
      {"cpu_sample_period_ns", "CPU sampled every", v.sample_period_ns, Unit::kDurationNs});
  f.evidence.push_back({"recordings", "Recordings given (their GPUs)",
                        static_cast<int64_t>(v.members.size()), Unit::kCount});
  std::string others;
  for (size_t i = 1; i < rows.size() && i <= kOthersListed; ++i) {
    others += fmt::format("{}{} ({}, {})", others.empty() ? "" : ", ", rows[i]->process.pid,
                          rows[i]->process.name, FormatDuration(rows[i]->cpu_while_idle_ns));
  }
  std::string files;
  for (const RunMember& m : v.members) files += (files.empty() ? "" : ", ") + m.file;
  f.where = fmt::format(
      "{}; steady state {} to {} after the program started ({}){}{}", Who(top),
      FormatDuration(v.steady_begin_ns - v.program_start_ns),
      FormatDuration(v.steady_end_ns - v.program_start_ns),
      v.steady_from_steps ? "the steps of " + files : "the GPU span of " + files,
      others.empty() ? "" : "; also on CPU while the GPUs were idle: " + others,
      v.missing.empty() ? ""
                        : fmt::format("; {} recording(s) of the run not given: their GPUs are not "
                                      "counted",
                                      v.missing.size()));
  f.recommendation =
      "Take this process's work off the GPU's critical path: a front end tokenizing: tokenize in "
      "more processes or ahead of scheduling; a detokenizer: detokenize every N steps (a stream "
      "interval) or in more processes, so that the engine never waits for it; an engine core "
      "scheduling for its workers: schedule the next step while the current one runs on the GPU "
      "(async scheduling, overlap scheduler). This is a coincidence in time from CPU samples of "
      "about 100 ms, not a traced wait: before moving work, confirm that the GPU waits for this "
      "process (NVTX ranges around its loop, py-spy on it), since a process busy with work the "
      "GPU does not need shows the same.";
  // Bounded by the idle time: the GPU cannot gain more than it idled.
  f.estimated_savings_ns = std::min(top.cpu_while_idle_ns, idle);
  out.push_back(std::move(f));
}

}  // namespace

Status RuleOtherProcessBusy(const RunsResult& runs, std::vector<Finding>& out) {
  for (const RunView& v : runs.runs) RuleOnRun(v, out);
  return Status::Ok();
}

}  // namespace sightline
