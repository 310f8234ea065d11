// The processes of a recorded run: each process's life and CPU time, and the CPU time other
// processes spent while this trace's GPU was idle (the multi-process pipeline's view).
#include "analyses/processes/processes.h"

#include <gtest/gtest.h>

#include "report/report.h"
#include "testing/context.h"
#include "testing/run_process_fixture.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;
using testing::ValueOrDie;

RunProcess Proc(int32_t pid, int32_t ppid, std::string name, TimeNs start, TimeNs end,
                const testing::CpuSamples& samples, std::string recording = "") {
  return testing::MakeRunProcess(pid, ppid, std::move(name), "", start, end, samples,
                                 std::move(recording));
}

// GPU busy [100, 200) and [300, 400): span [100, 400), idle [200, 300) = 100 ns.
Trace TwoBursts(std::vector<RunProcess> processes) {
  Trace t = TraceFixture().Kernel("a", 100, 200).Kernel("b", 300, 400).Build();
  t.source.path = "/runs/run.slrec";
  t.run_processes = std::move(processes);
  return t;
}

TEST(Processes, CpuWhileGpuIdleSplitsEachSampleOverItsInterval) {
  // The front end: one sample over [0, 400) with 200 ns of CPU: 0.5 ns per ns. In the span
  // [100, 400): 150; of that, the idle [200, 300): 50.
  // The detokenizer: all its CPU (100) in [200, 300): every bit while the GPU was idle.
  // The engine: the trace's own process.
  const Trace t = TwoBursts({Proc(10, 1, "front", 0, 400, {{400, 200}}),
                             Proc(11, 10, "engine", 0, 400, {{400, 300}}, "/other/dir/run.slrec"),
                             Proc(12, 10, "detok", 150, 350, {{200, 0}, {300, 100}, {350, 0}})});
  const ProcessesResult r = ValueOrDie(ComputeProcesses(*Ctx(t), {}));
  EXPECT_EQ(r.span_begin_ns, 100);
  EXPECT_EQ(r.span_end_ns, 400);
  EXPECT_EQ(r.gpu_idle_in_span_ns, 100);
  EXPECT_EQ(r.with_cuda, 1);
  ASSERT_EQ(r.processes.size(), 3u);
  const ProcessRow& front = r.processes[0];
  EXPECT_EQ(front.cpu_in_span_ns, 150);
  EXPECT_EQ(front.cpu_while_gpu_idle_ns, 50);
  EXPECT_DOUBLE_EQ(front.cpu_share, 0.5);
  EXPECT_EQ(front.recording, ProcessRecording::kNone);
  // Matched by file name: the recording moved with its process tree.
  EXPECT_EQ(r.processes[1].recording, ProcessRecording::kThisTrace);
  const ProcessRow& detok = r.processes[2];
  EXPECT_EQ(detok.cpu_while_gpu_idle_ns, 100);
  EXPECT_EQ(detok.cpu_in_span_ns, 100);
}

TEST(Processes, SectionNamesTheBusiestOtherProcessWhileTheGpuIdled) {
  const Trace t = TwoBursts({Proc(10, 1, "front", 0, 400, {{400, 200}}),
                             Proc(11, 10, "engine", 0, 400, {{400, 300}}, "run.slrec"),
                             Proc(12, 10, "detok", 150, 350, {{200, 0}, {300, 100}, {350, 0}})});
  Report report;
  auto ctx = Ctx(t);
  ASSERT_TRUE(RunProcessesSection(*ctx, 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  ASSERT_EQ(s.tables.size(), 1u);
  EXPECT_EQ(s.tables[0].rows.size(), 3u);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("process 12 (detok)"), std::string::npos) << s.notes[0];
}

TEST(Processes, NoSectionWithoutTheRunsProcessTree) {
  const Trace t = TwoBursts({});
  Report report;
  auto ctx = Ctx(t);
  ASSERT_TRUE(RunProcessesSection(*ctx, 0, report).ok());
  EXPECT_TRUE(report.sections.empty());
}

}  // namespace
}  // namespace sightline
