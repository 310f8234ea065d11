// The phases of a run: start-up cut into what it did (graph capture, autotuning, copies to the
// GPU, GPU work, compiling, host work), warm-up and steady state; and the start-up finding, ranked
// after the steady state's findings.
#include "analyses/phases/phases.h"

#include <gtest/gtest.h>

#include "analyses/findings/findings.h"
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

constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kS = 1'000 * kMs;

RunProcess Proc(int32_t pid, std::string name, std::string command, TimeNs start, TimeNs end,
                TimeNs busy_from, TimeNs busy_to) {
  // A sample every 100 ms: a whole core inside [busy_from, busy_to), nothing outside.
  testing::CpuSamples samples;
  for (TimeNs t = start + 100 * kMs; t <= end; t += 100 * kMs) {
    samples.emplace_back(t, (t > busy_from && t <= busy_to) ? 100 * kMs : 0);
  }
  return testing::MakeRunProcess(pid, 1, std::move(name), std::move(command), start, end, samples);
}

// Start-up of 100 s (bins of 100 ms) before ten 100 ms steps:
//   [0, 1 s) kernels (GPU work); [1, 3 s) 10 MiB to the GPU per 100 ms (copies);
//   [3, 53 s) a ptxas process on CPU, the GPU idle (compiling); [53, 60 s) five timing calls and a
//   kernel per 100 ms (autotuning); [60, 61 s) a stream capture; [61, 100 s) the program on CPU
//   (host work). The program started 5 s before the trace's first event.
Trace StartupTrace(bool with_processes) {
  TraceFixture f;
  f.Kernel("init_weights", 0, 1 * kS);
  for (TimeNs t = 1 * kS; t < 3 * kS; t += 100 * kMs) {
    f.Memcpy(MemOpKind::kHtoD, t, t + 1 * kMs, 10 << 20);
  }
  for (TimeNs t = 53 * kS; t < 60 * kS; t += 100 * kMs) {
    f.Kernel("triton_mm_config", t, t + 1 * kMs);
    for (int k = 0; k < 5; ++k) f.Api("cudaEventElapsedTime", t + 2 * kMs + k, t + 2 * kMs + k + 1);
  }
  f.Api("cudaStreamBeginCapture", 60 * kS, 60 * kS + 10);
  f.Api("cudaStreamEndCapture", 61 * kS - 10, 61 * kS);
  for (int i = 0; i < 10; ++i) {
    const TimeNs s = 100 * kS + i * 100 * kMs;
    f.Range("ProfilerStep#" + std::to_string(i), s, s + 100 * kMs);
    f.Launch("decode", s + 1 * kMs, s + 2 * kMs, s + 3 * kMs, s + 50 * kMs);
  }
  Trace t = f.Build();
  if (with_processes) {
    t.run_processes = {
        Proc(100, "python3", "python3 serve.py", -5 * kS, 102 * kS, 61 * kS, 100 * kS),
        Proc(200, "ptxas", "/usr/local/cuda/bin/ptxas -O3 k.ptx", 3 * kS, 53 * kS, 3 * kS, 53 * kS),
        Proc(300, "nvidia-smi", "nvidia-smi -q", 10 * kS, 11 * kS, 10 * kS, 11 * kS)};
  }
  return t;
}

TEST(Phases, StartupIsCutIntoWhatItDid) {
  const Trace t = StartupTrace(/*with_processes=*/true);
  const PhasesResult r = ValueOrDie(ComputePhases(*Ctx(t)));
  ASSERT_TRUE(r.has_steps);
  EXPECT_EQ(r.bin_ns, 100 * kMs);
  EXPECT_EQ(r.startup_ns(), 100 * kS);
  EXPECT_EQ(r.before_trace_ns, 5 * kS);
  EXPECT_EQ(r.steady_ns() + r.warmup_ns(), 10 * 100 * kMs);
  EXPECT_TRUE(r.cpu_known);
  EXPECT_EQ(r.activity(StartupActivity::kGpu), 1 * kS);
  EXPECT_EQ(r.activity(StartupActivity::kLoad), 2 * kS);
  EXPECT_EQ(r.activity(StartupActivity::kCompile), 50 * kS);
  EXPECT_EQ(r.activity(StartupActivity::kAutotune), 7 * kS);
  EXPECT_EQ(r.activity(StartupActivity::kCapture), 1 * kS);
  EXPECT_EQ(r.activity(StartupActivity::kHost), 39 * kS);
  // The stretches add up to start-up, in time order.
  ASSERT_EQ(r.segments.size(), 6u);
  DurationNs sum = 0;
  for (const StartupSegment& s : r.segments) sum += s.end_ns - s.start_ns;
  EXPECT_EQ(sum, r.startup_ns());
  EXPECT_EQ(r.segments[3].activity, StartupActivity::kAutotune);
  EXPECT_EQ(r.segments[3].timing_calls, 70 * 5);
  EXPECT_EQ(r.segments[1].htod_bytes, int64_t{20} * (10 << 20));
  // ptxas is a compiler, nvidia-smi is not.
  EXPECT_EQ(r.compiler_processes, 1);
  EXPECT_EQ(r.compiler_cpu_ns, 50 * kS);
}

TEST(Phases, WithoutAProcessTreeTheIdleHostIsUnknown) {
  const Trace t = StartupTrace(/*with_processes=*/false);
  const PhasesResult r = ValueOrDie(ComputePhases(*Ctx(t)));
  EXPECT_FALSE(r.cpu_known);
  EXPECT_EQ(r.before_trace_ns, -1);
  EXPECT_EQ(r.activity(StartupActivity::kCompile), 0);
  // Compiling and host work are both GPU idle with nothing to tell them apart.
  EXPECT_EQ(r.activity(StartupActivity::kUnknown), 89 * kS);
}

TEST(Phases, ShortFlickersAreFoldedIntoTheirNeighbour) {
  // One 100 ms bin of GPU work inside 50 s of compiling does not make a stretch of its own.
  TraceFixture f;
  f.Kernel("stray", 20 * kS, 20 * kS + 50 * kMs);
  f.Kernel("init_weights", 0, 1 * kS);
  for (int i = 0; i < 10; ++i) {
    const TimeNs s = 100 * kS + i * 100 * kMs;
    f.Range("ProfilerStep#" + std::to_string(i), s, s + 100 * kMs);
    f.Launch("decode", s + 1 * kMs, s + 2 * kMs, s + 3 * kMs, s + 50 * kMs);
  }
  Trace u = f.Build();
  u.run_processes = {Proc(100, "python3", "python3 x.py", 0, 102 * kS, 0, 0),
                     Proc(200, "python3",
                          "/venv/bin/python3 /venv/lib/python3.12/site-packages/torch/_inductor/"
                          "compile_worker/__main__.py --workers=8",
                          1 * kS, 101 * kS, 1 * kS, 100 * kS)};
  const PhasesResult r = ValueOrDie(ComputePhases(*Ctx(u)));
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_EQ(r.segments[0].activity, StartupActivity::kGpu);
  EXPECT_EQ(r.segments[1].activity, StartupActivity::kCompile);
  EXPECT_EQ(r.segments[1].kernels, 1);  // the stray kernel, folded in
  EXPECT_EQ(r.activity(StartupActivity::kCompile), 99 * kS);
}

TEST(Phases, AStartupOfDaysStaysWithinTheBinBound) {
  // The first step 5 days after the first event (the builder keeps times within 2^49 ns of the
  // median): 4.3 million bins of 100 ms, more than the bound.
  TraceFixture f;
  f.Kernel("first", 1 * kS, 1 * kS + 1 * kMs);
  const TimeNs late = int64_t{5} * 24 * 3600 * kS;
  for (int i = 0; i < 4; ++i) {
    const TimeNs s = late + i * 100 * kMs;
    f.Range("ProfilerStep#" + std::to_string(i), s, s + 100 * kMs);
    f.Launch("decode", s + 1 * kMs, s + 2 * kMs, s + 3 * kMs, s + 50 * kMs);
  }
  const Trace t = f.Build();
  const PhasesResult r = ValueOrDie(ComputePhases(*Ctx(t)));
  ASSERT_TRUE(r.has_steps);
  ASSERT_GT(r.bin_ns, 0) << "start-up " << r.startup_ns() << " steps " << r.steps;
  EXPECT_LE(r.startup_ns() / r.bin_ns, 1'000'000);
  DurationNs sum = 0;
  for (const StartupSegment& s : r.segments) sum += s.end_ns - s.start_ns;
  EXPECT_EQ(sum, r.startup_ns());
}

TEST(Phases, NoStepsNoPhases) {
  const Trace t = TraceFixture().Kernel("a", 0, 10).Build();
  const PhasesResult r = ValueOrDie(ComputePhases(*Ctx(t)));
  EXPECT_FALSE(r.has_steps);
  EXPECT_TRUE(r.segments.empty());
}

TEST(StartupFinding, NamesTheWorkACacheTakesAwayAndRanksAfterTheSteadyState) {
  const Trace t = StartupTrace(/*with_processes=*/true);
  auto c = Ctx(t);
  std::vector<Finding> out;
  ASSERT_TRUE(RuleStartup(*c, out).ok());
  ASSERT_EQ(out.size(), 1u);
  const Finding& f = out[0];
  EXPECT_EQ(f.id, "startup");
  EXPECT_TRUE(f.once_per_start);
  EXPECT_EQ(f.severity, Severity::kMedium);
  // compiling 50 s + autotuning 7 s + capture 1 s + copies 2 s; host work is not counted.
  EXPECT_EQ(f.estimated_savings_ns, 60 * kS);
  EXPECT_NE(f.title.find("compiling 50.00 s"), std::string::npos) << f.title;
  EXPECT_NE(f.recommendation.find("TORCHINDUCTOR_CACHE_DIR"), std::string::npos);
  // A steady-state finding worth far less still ranks first.
  Finding steady;
  steady.id = "launch_bound";
  steady.estimated_savings_ns = 1 * kMs;
  std::vector<Finding> all = {f, steady};
  SortFindings(all);
  EXPECT_EQ(all[0].id, "launch_bound");
  EXPECT_EQ(all[1].id, "startup");
}

TEST(StartupFinding, QuietWhenStartupHoldsLittleToCache) {
  // Start-up of 100 s that is all host work: nothing a compile cache would take away.
  TraceFixture f;
  for (int i = 0; i < 10; ++i) {
    const TimeNs s = 100 * kS + i * 100 * kMs;
    f.Range("ProfilerStep#" + std::to_string(i), s, s + 100 * kMs);
    f.Launch("decode", s + 1 * kMs, s + 2 * kMs, s + 3 * kMs, s + 50 * kMs);
  }
  f.Kernel("first", 0, 1 * kMs);
  Trace t = f.Build();
  t.run_processes = {Proc(100, "python3", "python3 x.py", 0, 102 * kS, 0, 100 * kS)};
  auto c = Ctx(t);
  std::vector<Finding> out;
  ASSERT_TRUE(RuleStartup(*c, out).ok());
  EXPECT_TRUE(out.empty());
  const PhasesResult r = ValueOrDie(ComputePhases(*c));
  EXPECT_EQ(r.activity(StartupActivity::kHost), r.startup_ns());
}

// Lazy module loading: a kernel's first launch in its process takes milliseconds (the driver
// loads its code inside the call), later ones microseconds. "gemm" first launched at 1 ms in
// start-up (2 ms), "norm" first in the warm-up (1 ms), "add" first in the steady state but fast
// (no load: its module came with another kernel's); a graph launch's slow first call is not a
// module load.
TEST(Phases, FirstLaunchesThatLoadedTheirKernelsCode) {
  TraceFixture f;
  f.Device(0);
  f.Launch("gemm", 1 * kMs, 3 * kMs, 3 * kMs, 4 * kMs);
  for (int i = 0; i < 20; ++i) {
    const TimeNs t = 10 * kMs + i * kMs;
    f.Launch("gemm", t, t + 5'000, t + 10'000, t + 20'000);
  }
  f.Launch("norm", 12 * kMs + 100'000, 13 * kMs + 100'000, 13 * kMs + 200'000, 13 * kMs + 300'000);
  f.Launch("add", 40 * kMs, 40 * kMs + 6'000, 40 * kMs + 10'000, 40 * kMs + 20'000);
  f.Api("cudaGraphLaunch", 50 * kMs, 55 * kMs, ApiKind::kRuntime, {}, 77);
  f.Kernel("graph_kernel", 55 * kMs, 56 * kMs, {}, 77);
  const Trace trace = f.Build();
  const FirstLaunchLoads r =
      FindFirstLaunchLoads(trace, /*first_step_ns=*/10 * kMs, /*first_steady_ns=*/20 * kMs);
  EXPECT_EQ(r.first_launches, 3);  // gemm, norm, add
  EXPECT_EQ(r.median_launch_ns, 5'000);
  EXPECT_EQ(r.loading, 2);
  EXPECT_EQ(r.loading_ns, 3 * kMs);
  EXPECT_EQ(r.startup, 1);
  EXPECT_EQ(r.startup_ns, 2 * kMs);
  EXPECT_EQ(r.warmup, 1);
  EXPECT_EQ(r.warmup_ns, 1 * kMs);
  EXPECT_EQ(r.steady, 0);
}

}  // namespace
}  // namespace sightline
