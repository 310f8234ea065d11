#include "analyses/processes/run_view.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "analyses/processes/cpu_spread.h"
#include "base/file_io.h"
#include "base/stats.h"

namespace sightline {
namespace {

// The first step after a recording's warm-up steps (all of them when the warm-up is every step).
TimeNs SteadyStart(const RunMember& m) {
  const size_t w = static_cast<size_t>(std::max<int64_t>(0, m.warmup_steps));
  return m.steps[w < m.steps.size() ? w : 0].start_ns;
}

// Median |difference| of the k-th step starts, over every pair of recordings with as many steps.
void StepStartSkew(RunView& v) {
  std::vector<int64_t> diffs;
  for (size_t i = 0; i < v.members.size(); ++i) {
    for (size_t j = i + 1; j < v.members.size(); ++j) {
      const std::vector<Interval>& a = v.members[i].steps;
      const std::vector<Interval>& b = v.members[j].steps;
      if (a.empty() || a.size() != b.size()) continue;
      ++v.step_pairs;
      for (size_t k = 0; k < a.size(); ++k)
        diffs.push_back(std::llabs(a[k].start_ns - b[k].start_ns));
    }
  }
  if (!diffs.empty()) v.step_start_skew_ns = static_cast<DurationNs>(std::llround(Median(diffs)));
}

// The CPU samples' period: the median time between two samples of a process.
DurationNs SamplePeriod(const std::vector<RunProcessRow>& rows) {
  std::vector<int64_t> d;
  for (const RunProcessRow& r : rows) {
    const std::vector<TimeNs>& t = r.process.cpu_end_ns;
    for (size_t i = 1; i < t.size(); ++i) {
      if (t[i] > t[i - 1]) d.push_back(t[i] - t[i - 1]);
    }
  }
  return d.empty() ? 0 : static_cast<DurationNs>(std::llround(Median(d)));
}

void AddWindows(RunView& v, const std::vector<Interval>& busy, const RunViewOptions& options) {
  const DurationNs span = v.gpu_end_ns - v.gpu_begin_ns;
  if (span <= 0) return;
  const int64_t max_windows = std::max(1, options.max_windows);
  v.window_ns = std::max<DurationNs>(v.sample_period_ns, (span + max_windows - 1) / max_windows);
  const RunMember* ref = v.reference >= 0 ? &v.members[static_cast<size_t>(v.reference)] : nullptr;
  for (TimeNs a = v.gpu_begin_ns; a < v.gpu_end_ns; a += v.window_ns) {
    RunWindow& w = v.windows.emplace_back();
    w.start_ns = a;
    w.end_ns = std::min(a + v.window_ns, v.gpu_end_ns);
    w.gpu_busy_ns = BusyWithin(busy, w.start_ns, w.end_ns);
    for (const RunMember& m : v.members) {
      w.member_busy_ns.push_back(BusyWithin(m.busy, w.start_ns, w.end_ns));
    }
    if (ref != nullptr) {
      for (const Interval& s : ref->steps) {
        w.steps += s.start_ns >= w.start_ns && s.start_ns < w.end_ns ? 1 : 0;
      }
    }
    for (const RunProcessRow& r : v.processes) {
      w.cpu_ns.push_back(CpuOfProcessWithin(r.process, w.start_ns, w.end_ns, {}).cpu_ns);
    }
  }
}

RunView ComputeRun(std::vector<RunMember> members, const RunViewOptions& options) {
  RunView v;
  v.members = std::move(members);
  const RunMember& first = v.members.front();
  v.document = first.document;
  v.host = first.host;
  v.program_start_ns = first.run_start_ns;
  v.program_end_ns = first.run_end_ns;

  // Clocks: the offsets of the recordings' clocks to CLOCK_MONOTONIC.
  DurationNs lo = first.trace_minus_monotonic_ns, hi = lo;
  v.not_ranks = true;
  for (const RunMember& m : v.members) {
    lo = std::min(lo, m.trace_minus_monotonic_ns);
    hi = std::max(hi, m.trace_minus_monotonic_ns);
    if (m.has_end) {
      v.clock_drift_ns = std::max<DurationNs>(
          v.clock_drift_ns,
          std::llabs(m.trace_minus_monotonic_at_end_ns - m.trace_minus_monotonic_ns));
    }
    v.not_ranks = v.not_ranks && m.rank < 0 && m.comm_kernels == 0;
  }
  v.clock_spread_ns = hi - lo;
  v.not_ranks = v.not_ranks && v.members.size() >= 2;

  // Every given GPU together: idle means none of them had work.
  std::vector<Interval> busy;
  for (const RunMember& m : v.members) busy.insert(busy.end(), m.busy.begin(), m.busy.end());
  busy = MergeIntervals(std::move(busy));
  if (!busy.empty()) {
    v.gpu_begin_ns = busy.front().start_ns;
    v.gpu_end_ns = busy.back().end_ns;
    v.gpu_idle_in_span_ns = (v.gpu_end_ns - v.gpu_begin_ns) - TotalLength(busy);
  }
  v.steady_begin_ns = v.gpu_begin_ns;
  v.steady_end_ns = v.gpu_end_ns;
  DurationNs most_busy = -1;
  bool reference_has_steps = false;
  for (size_t i = 0; i < v.members.size(); ++i) {
    const RunMember& m = v.members[i];
    const bool steps = !m.steps.empty();
    if (steps) {
      const TimeNs a = SteadyStart(m), b = m.steps.back().end_ns;
      v.steady_begin_ns = v.steady_from_steps ? std::min(v.steady_begin_ns, a) : a;
      v.steady_end_ns = v.steady_from_steps ? std::max(v.steady_end_ns, b) : b;
      v.steady_from_steps = true;
    }
    // The reference: the busiest recording among those with steps (any, when none has steps).
    const DurationNs b = TotalLength(m.busy);
    if ((steps && !reference_has_steps) || (steps == reference_has_steps && b > most_busy)) {
      v.reference = static_cast<int>(i);
      most_busy = b;
      reference_has_steps = steps;
    }
  }
  if (v.steady_end_ns > v.steady_begin_ns) {
    v.idle_in_steady_ns = (v.steady_end_ns - v.steady_begin_ns) -
                          BusyWithin(busy, v.steady_begin_ns, v.steady_end_ns);
  }

  // One row per process of the run, with its recording when it is given.
  for (const RunProcess& p : first.processes) {
    RunProcessRow& row = v.processes.emplace_back();
    row.process = p;
    row.recording_file = std::string(FileNameOf(p.recording));
    for (size_t i = 0; i < v.members.size() && !row.recording_file.empty(); ++i) {
      if (v.members[i].pid == p.pid || v.members[i].file == row.recording_file) {
        row.member = static_cast<int>(i);
      }
    }
    if (row.member >= 0) {
      const RunMember& m = v.members[static_cast<size_t>(row.member)];
      row.kernels = m.kernels;
      row.memops = m.memops;
      row.gpu_busy_ns = TotalLength(m.busy);
      row.gpu_busy_steady_ns = BusyWithin(m.busy, v.steady_begin_ns, v.steady_end_ns);
      row.steps = static_cast<int64_t>(m.steps.size());
      row.steps_by = m.steps_by;
    } else if (!row.recording_file.empty()) {
      v.missing.push_back(row.recording_file);
    }
    if (v.steady_end_ns > v.steady_begin_ns) {
      const CpuWithin cpu = CpuOfProcessWithin(p, v.steady_begin_ns, v.steady_end_ns, busy);
      row.cpu_steady_ns = cpu.cpu_ns;
      row.cpu_while_idle_ns = cpu.while_idle_ns;
    }
  }
  StepStartSkew(v);
  v.sample_period_ns = SamplePeriod(v.processes);
  AddWindows(v, busy, options);
  return v;
}

}  // namespace

StatusOr<RunsResult> ComputeRuns(std::vector<RunMember> members, const RunViewOptions& options) {
  RunsResult out;
  std::vector<std::string> keys;  // in the order of each run's first recording
  std::map<std::string, std::vector<RunMember>> by_run;
  for (RunMember& m : members) {
    if (m.run_key.empty()) continue;
    auto [it, inserted] = by_run.try_emplace(m.run_key);
    if (inserted) keys.push_back(m.run_key);
    it->second.push_back(std::move(m));
  }
  for (const std::string& key : keys)
    out.runs.push_back(ComputeRun(std::move(by_run[key]), options));
  return out;
}

}  // namespace sightline
