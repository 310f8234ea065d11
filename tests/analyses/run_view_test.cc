// The recordings of one run on one clock (analyses/processes/run_view.h): members grouped by run,
// each recording's clock put on CLOCK_MONOTONIC with its own offset, one row per process, the GPU
// span in windows; and the rule other_process_busy, which fires only when the given GPUs idle in
// the steady state while a process without CUDA is on CPU.
#include "analyses/processes/run_view.h"

#include <gtest/gtest.h>

#include <map>

#include "analyses/findings/findings.h"
#include "report/report.h"
#include "testing/run_process_fixture.h"
#include "testing/status.h"

namespace sightline {
namespace {

using testing::ValueOrDie;

constexpr DurationNs kMs = 1'000'000;

RunProcess Proc(int32_t pid, int32_t ppid, TimeNs start, TimeNs end,
                const testing::CpuSamples& samples, std::string recording = "") {
  return testing::MakeRunProcess(pid, ppid, "p" + std::to_string(pid),
                                 "python3 -c " + std::to_string(pid), start, end, samples,
                                 std::move(recording));
}

// A CUDA worker's recording of the run that starts at 0 (CLOCK_MONOTONIC): busy `busy`, steps
// `steps`, already on the monotonic clock (what ComputeRunMember leaves), with its own clock's
// offset to it.
RunMember Worker(int32_t pid, std::string file, DurationNs offset, std::vector<Interval> busy,
                 std::vector<Interval> steps, std::vector<RunProcess> processes) {
  RunMember m;
  m.label = file;
  m.file = std::move(file);
  m.run_key = "host|0|10";
  m.document = "/runs/run.processes.json";
  m.host = "host";
  m.pid = pid;
  m.trace_minus_monotonic_ns = offset;
  m.trace_minus_monotonic_at_end_ns = offset + 50;
  m.has_end = true;
  m.kernels = static_cast<int64_t>(busy.size());
  m.devices = {0};
  m.busy = std::move(busy);
  m.steps_by = "graph replays";
  m.steps = std::move(steps);
  m.run_start_ns = 0;
  m.run_end_ns = 1000 * kMs;
  m.root_pid = 10;
  m.processes = std::move(processes);
  return m;
}

// Ten steps of 10 ms from 200 ms, the GPU busy the first 2 ms of each (80% idle).
std::vector<Interval> Steps(TimeNs skew = 0) {
  std::vector<Interval> v;
  for (int i = 0; i < 10; ++i)
    v.push_back({200 * kMs + i * 10 * kMs + skew, 210 * kMs + i * 10 * kMs + skew});
  return v;
}
std::vector<Interval> Busy(TimeNs skew = 0) {
  std::vector<Interval> v;
  for (const Interval& s : Steps(skew)) v.push_back({s.start_ns, s.start_ns + 2 * kMs});
  return v;
}

// CPU samples every 100 ms up to 1 s, as `sightline record` takes them: `used` per sample
// ending at (i + 1) * 100 ms, 0 for the others.
std::vector<std::pair<TimeNs, DurationNs>> Every100(std::map<int, DurationNs> used) {
  std::vector<std::pair<TimeNs, DurationNs>> v;
  for (int i = 0; i < 10; ++i) v.push_back({(i + 1) * 100 * kMs, used.count(i) ? used[i] : 0});
  return v;
}

// The run: front end 10 (no CUDA), detokenizer 12 (no CUDA), workers 20 and 21 with recordings
// (30% of a core throughout). `detok`: the detokenizer's CPU per sample.
std::vector<RunProcess> Processes(std::map<int, DurationNs> detok) {
  std::map<int, DurationNs> worker;
  for (int i = 0; i < 10; ++i) worker[i] = 30 * kMs;
  return {Proc(10, 1, 0, 1000 * kMs, Every100({{0, 50 * kMs}})),
          Proc(12, 10, 5 * kMs, 1000 * kMs, Every100(std::move(detok))),
          Proc(20, 10, 10 * kMs, 1000 * kMs, Every100(worker), "/tmp/x/run.slrec"),
          Proc(21, 10, 10 * kMs, 1000 * kMs, Every100(worker), "/tmp/x/run.21.slrec")};
}

std::vector<RunMember> TwoWorkers(std::map<int, DurationNs> detok) {
  const std::vector<RunProcess> procs = Processes(std::move(detok));
  return {Worker(20, "run.slrec", 1'000'000'000'000, Busy(), Steps(), procs),
          Worker(21, "run.21.slrec", 1'000'000'000'300, Busy(3'000), Steps(3'000), procs)};
}

// The detokenizer on CPU all of [200, 300) ms (the steady state).
std::map<int, DurationNs> BusyInSteadyState() { return {{2, 100 * kMs}}; }

TEST(RunView, RecordingsOfOneRunAreRowsOnOneClock) {
  std::vector<RunMember> members = TwoWorkers(BusyInSteadyState());
  // A recording of another run, and one with no run: not in this view.
  members.push_back(Worker(30, "other.slrec", 0, Busy(), Steps(), Processes({})));
  members.back().run_key = "host|5|30";
  members.push_back(RunMember{});
  const RunsResult r = ValueOrDie(ComputeRuns(std::move(members)));
  ASSERT_EQ(r.runs.size(), 2u);
  const RunView& v = r.runs[0];
  ASSERT_EQ(v.members.size(), 2u);
  EXPECT_EQ(r.runs[1].members.size(), 1u);
  // The clocks' offsets differ by 300 ns; each drifts 50 ns from start to end.
  EXPECT_EQ(v.clock_spread_ns, 300);
  EXPECT_EQ(v.clock_drift_ns, 50);
  EXPECT_EQ(v.step_start_skew_ns, 3'000);
  EXPECT_EQ(v.step_pairs, 1);
  EXPECT_TRUE(v.not_ranks);
  ASSERT_EQ(v.processes.size(), 4u);
  EXPECT_EQ(v.processes[0].member, -1);
  EXPECT_FALSE(v.processes[0].has_cuda());
  EXPECT_EQ(v.processes[2].member, 0);
  EXPECT_EQ(v.processes[3].member, 1);
  EXPECT_EQ(v.processes[3].steps, 10);
  EXPECT_EQ(v.processes[3].gpu_busy_ns, 20 * kMs);
  EXPECT_TRUE(v.missing.empty());
  // The steady state: the first step to the last step's end over both, 2 ms in 10 busy.
  EXPECT_TRUE(v.steady_from_steps);
  EXPECT_EQ(v.steady_begin_ns, 200 * kMs);
  EXPECT_EQ(v.steady_end_ns, 300 * kMs + 3'000);
  EXPECT_EQ(v.idle_in_steady_ns, (100 * kMs + 3'000) - 10 * (2 * kMs + 3'000));
  // The detokenizer: all of its 100 ms in [200, 300), 80 ms of them while no GPU was busy.
  const RunProcessRow& detok = v.processes[1];
  EXPECT_EQ(detok.cpu_steady_ns, 100 * kMs);
  EXPECT_EQ(detok.cpu_while_idle_ns, 100 * kMs - 10 * (2 * kMs + 3'000));
  // Windows of the samples' period (100 ms) over the GPU span [200, 292.003) ms.
  EXPECT_EQ(v.sample_period_ns, 100 * kMs);
  EXPECT_EQ(v.window_ns, 100 * kMs);
  ASSERT_EQ(v.windows.size(), 1u);
  EXPECT_EQ(v.windows[0].steps, 10);
  EXPECT_EQ(v.windows[0].gpu_busy_ns, 10 * (2 * kMs + 3'000));
  EXPECT_EQ(v.windows[0].member_busy_ns, (std::vector<DurationNs>{20 * kMs, 20 * kMs}));
  EXPECT_EQ(v.windows[0].cpu_ns[1], 92 * kMs + 3'000);  // detokenizer: the window's length

  Report report;
  AddRunSections(r, report);
  ASSERT_EQ(report.sections.size(), 1u);  // the run of one recording has no section
  const Section& s = report.sections[0];
  EXPECT_EQ(s.key, "run_processes");
  EXPECT_EQ(s.tables[0].rows.size(), 4u);
  EXPECT_EQ(s.tables[1].rows.size(), 1u);
}

TEST(RunView, ARecordingNotGivenIsNamedAndRanksStay) {
  std::vector<RunMember> members = TwoWorkers({});
  members.pop_back();
  members[0].rank = 0;
  const RunsResult r = ValueOrDie(ComputeRuns(std::move(members)));
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].missing, std::vector<std::string>{"run.21.slrec"});
  EXPECT_FALSE(r.runs[0].not_ranks);
  EXPECT_EQ(r.runs[0].step_start_skew_ns, -1);
}

TEST(RunView, MemberRoundTripsThroughItsBlob) {
  const RunMember m = TwoWorkers(BusyInSteadyState())[1];
  const RunMember d = ValueOrDie(DecodeRunMember(EncodeRunMember(m)));
  EXPECT_EQ(d.file, m.file);
  EXPECT_EQ(d.run_key, m.run_key);
  EXPECT_EQ(d.busy, m.busy);
  EXPECT_EQ(d.steps, m.steps);
  ASSERT_EQ(d.processes.size(), m.processes.size());
  EXPECT_EQ(d.processes[1].cpu_used_ns, m.processes[1].cpu_used_ns);
  EXPECT_EQ(d.processes[3].recording, m.processes[3].recording);
  const std::string blob = EncodeRunMember(m);
  EXPECT_FALSE(DecodeRunMember(blob.substr(0, blob.size() / 2)).ok());
  EXPECT_FALSE(DecodeRunMember("SRP4" + blob.substr(4)).ok());
}

std::vector<Finding> Rule(std::map<int, DurationNs> detok) {
  const RunsResult r = ValueOrDie(ComputeRuns(TwoWorkers(std::move(detok))));
  std::vector<Finding> out;
  EXPECT_TRUE(RuleOtherProcessBusy(r, out).ok());
  return out;
}

TEST(OtherProcessBusy, FiresWhenTheGpusIdleWhileAProcessWithoutCudaWorks) {
  const std::vector<Finding> out = Rule(BusyInSteadyState());
  ASSERT_EQ(out.size(), 1u);
  const Finding& f = out[0];
  EXPECT_EQ(f.id, "other_process_busy");
  EXPECT_NE(f.title.find("process 12 (p12)"), std::string::npos) << f.title;
  EXPECT_NE(f.where.find("process 12"), std::string::npos) << f.where;
  // The saving: its CPU time while no GPU was busy, which is all the idle time here.
  const DurationNs idle = (100 * kMs + 3'000) - 10 * (2 * kMs + 3'000);
  EXPECT_EQ(f.estimated_savings_ns, 100 * kMs - 10 * (2 * kMs + 3'000));
  EXPECT_LE(f.estimated_savings_ns, idle);
  EXPECT_EQ(f.severity, Severity::kMedium);
}

TEST(OtherProcessBusy, QuietWhenNoProcessWithoutCudaWorksInTheSteadyState) {
  // The detokenizer works before the steps start, not during them; the front end's CPU is before
  // the GPU work; the workers (with CUDA) are busy throughout and do not count.
  EXPECT_TRUE(Rule({{1, 90 * kMs}}).empty());
  // A trickle: 2 ms of CPU over the 100 ms steady state (2% of one core) is not the GPU's wait.
  EXPECT_TRUE(Rule({{2, 2 * kMs}}).empty());
  // Nothing at all.
  EXPECT_TRUE(Rule({}).empty());
}

TEST(OtherProcessBusy, QuietWhenTheGpusAreBusy) {
  std::vector<RunMember> members = TwoWorkers(BusyInSteadyState());
  for (RunMember& m : members) m.busy = {{200 * kMs, 300 * kMs + 3'000}};  // never idle
  const RunsResult r = ValueOrDie(ComputeRuns(std::move(members)));
  std::vector<Finding> out;
  ASSERT_TRUE(RuleOtherProcessBusy(r, out).ok());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace sightline
