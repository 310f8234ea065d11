// Tests for the facts' holders (facts/trace_facts.h): each family's holder works on its own, over
// only the trace, its options and the holders it borrows (no TraceFacts); the holders TraceFacts
// owns are wired to each other (the loop's windows on the GPU-time busy unions, the communication
// split on its device slots); each fact is built once when several threads ask at once; and the
// facts built first are built alike side by side.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "facts/gpu_time_facts.h"
#include "facts/graph_facts.h"
#include "facts/graph_replays.h"
#include "facts/host_facts.h"
#include "facts/kernel_facts.h"
#include "facts/loop_facts.h"
#include "facts/trace_facts.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::HostThread;
using testing::TraceFixture;
using testing::Where;

constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs)";
constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

// A GEMM on device 0; on device 3 an all-reduce with a GEMM under its second half; on device 5
// only a copy (a device with work and no kernel); no iteration ranges.
Trace ThreeDevices() {
  return TraceFixture()
      .Kernel(kGemm, 0, 100, Where{0, 7})
      .Kernel(kAllReduce, 200, 400, Where{3, 9})
      .Kernel(kGemm, 300, 500, Where{3, 7})
      .Memcpy(MemOpKind::kHtoD, 600, 700, 64, Where{5, 7})
      .Build();
}

TEST(FactHolders, EachHolderStandsOnTheHoldersItBorrows) {
  const Trace t = ThreeDevices();
  const FactsOptions options;
  const FactsInputs inputs;
  GpuTimeFacts gpu(t);
  KernelFacts kernels(t, gpu);
  HostFacts host(t, options);
  GraphFacts graphs(t, inputs, host);
  LoopFacts loop(t, options, gpu, host, graphs);

  EXPECT_EQ(gpu.GpuDevices(), (std::vector<int32_t>{0, 3, 5}));
  EXPECT_EQ(gpu.TotalKernelTimeNs(), 100 + 200 + 200);
  // The split shares GPU time's device slots: device 5 has a slot and no kernel, device 9 none.
  const CommSplit& c3 = kernels.Comm(3);
  EXPECT_EQ(c3.comm_kernels, 1);
  EXPECT_EQ(c3.comm_ns, 200);
  EXPECT_EQ(c3.compute_ns, 200);
  EXPECT_EQ(c3.exposed_ns(), 100);
  EXPECT_EQ(kernels.Comm(0).comm_ns, 0);
  EXPECT_EQ(kernels.Comm(0).compute_ns, 100);
  EXPECT_EQ(kernels.Comm(5).compute_ns, 0);
  EXPECT_TRUE(kernels.Comm(9).compute.empty());
  EXPECT_TRUE(kernels.HasCommunication());

  // Without graph kernels the launch index with capture points is the host's own.
  EXPECT_EQ(&graphs.LaunchesWithCapture(), &host.Launches());
  EXPECT_TRUE(graphs.Replays().replays.empty());

  // Without iterations, one window per busy device over its busy span.
  EXPECT_EQ(loop.MainSet(), nullptr);
  const std::vector<LoopWindow>& w = loop.Windows();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[1].device, 3);
  EXPECT_EQ(w[1].start_ns, 200);
  EXPECT_EQ(w[1].end_ns, 500);
  EXPECT_EQ(w[2].device, 5);
  EXPECT_EQ(loop.FindWindow(-1, 650), 2);
  EXPECT_EQ(loop.FindWindow(-1, 550), -1);
  EXPECT_EQ(loop.WindowLabel(w[0]), "whole trace");
}

TEST(FactHolders, HostFactsReadTheGcNamesOfTheirOptions) {
  const Trace t = TraceFixture()
                      .Gc(0, 10, HostThread{100, 100}, "gc.collect")
                      .Gc(20, 30, HostThread{200, 200})  // "Python GC": not named below
                      .Build();
  FactsOptions options;
  options.gc_range_names = {"gc.collect"};
  HostFacts host(t, options);
  EXPECT_EQ(host.GcIntervals(-1), (std::vector<Interval>{{0, 10}}));
  EXPECT_EQ(host.GcIntervals(100), (std::vector<Interval>{{0, 10}}));
  EXPECT_TRUE(host.GcIntervals(200).empty());
  TraceFacts defaults(t);  // "Python GC"
  EXPECT_EQ(defaults.host().GcIntervals(-1), (std::vector<Interval>{{20, 30}}));
}

TEST(TraceFacts, OtherIterationOptionsLeaveTheLoopsOwn) {
  // Three profiler steps, each launching a GEMM and a norm.
  TraceFixture f;
  for (TimeNs s = 0; s < 3; ++s) {
    const TimeNs t0 = 1'000 * s;
    f.Range("ProfilerStep#" + std::to_string(s), t0, t0 + 900);
    f.Launch(kGemm, t0 + 10, t0 + 20, t0 + 100, t0 + 400);
    f.Launch("rms_norm", t0 + 30, t0 + 40, t0 + 400, t0 + 500);
  }
  const Trace t = f.Build();
  TraceFacts facts(t);
  IterationsOptions other;
  other.name_regex = "no range is named so";
  StatusOr<IterationsResult> none = ComputeIterations(facts, other);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->sets.empty());
  ASSERT_NE(facts.loop().MainSet(), nullptr);
  ASSERT_EQ(facts.loop().MainSet()->iterations.size(), 3u);
  // Measured with the GPU-time and host holders: each step's launched kernels and busy time.
  for (const Iteration& it : facts.loop().MainSet()->iterations) {
    EXPECT_EQ(it.launched.kernel_count, 2);
    EXPECT_EQ(it.gpu_busy_launched_ns, 400);
  }
}

TEST(TraceFacts, EachFactIsBuiltOnceWhenThreadsAskAtOnce) {
  const Trace t = ThreeDevices();
  TraceFacts facts(t);
  constexpr int kThreads = 4;
  std::vector<const void*> busy(kThreads), comm(kThreads), windows(kThreads), samples(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      // Each thread asks in another order, so that any of them may be the one that builds.
      if (i % 2 == 0) windows[i] = &facts.loop().Windows();
      comm[i] = &facts.kernels().Comm(3);
      busy[i] = &facts.gpu().Busy(3);
      if (i % 2 == 1) windows[i] = &facts.loop().Windows();
      samples[i] = &facts.samples();
    });
  }
  for (std::thread& th : threads) th.join();
  for (int i = 1; i < kThreads; ++i) {
    EXPECT_EQ(busy[i], busy[0]);
    EXPECT_EQ(comm[i], comm[0]);
    EXPECT_EQ(windows[i], windows[0]);
    EXPECT_EQ(samples[i], samples[0]);
  }
  EXPECT_EQ(facts.gpu().Busy(3), (std::vector<Interval>{{200, 500}}));
  EXPECT_EQ(facts.loop().Windows().size(), 3u);
}

// The pipeline builds these side by side before the analyses (RunAnalyses): built on threads of
// their own while a third asks for the loop's windows (which read both), they are the facts a
// trace's own holders build when asked one after the other.
TEST(TraceFacts, IndependentFirstFactsBuildSideBySide) {
  TraceFixture f;
  for (TimeNs s = 0; s < 3; ++s) {
    const TimeNs t0 = 1'000 * s;
    f.Range("ProfilerStep#" + std::to_string(s), t0, t0 + 900);
    f.Launch(kGemm, t0 + 10, t0 + 20, t0 + 100, t0 + 400, Where{0, 7});
    f.Launch("rms_norm", t0 + 30, t0 + 40, t0 + 400, t0 + 500, Where{1, 7}, HostThread{100, 101});
  }
  const Trace t = f.Build();
  TraceFacts facts(t);
  const std::vector<std::function<void()>> first = facts.IndependentFirstFacts();
  ASSERT_EQ(first.size(), 2u);  // the busy unions, the launch index
  std::vector<std::thread> threads;
  for (const std::function<void()>& build : first) threads.emplace_back(build);
  size_t windows = 0;
  threads.emplace_back([&] { windows = facts.loop().Windows().size(); });
  for (std::thread& th : threads) th.join();

  TraceFacts alone(t);
  EXPECT_EQ(facts.gpu().GpuDevices(), (std::vector<int32_t>{0, 1}));
  for (int32_t d : {0, 1}) EXPECT_EQ(facts.gpu().Busy(d), alone.gpu().Busy(d)) << d;
  const LaunchIndex& launches = facts.host().Launches();
  const int32_t second = launches.ThreadOf(100, 101);
  ASSERT_GE(second, 0);
  EXPECT_EQ(launches.ThreadWork(second).size(), 3u);  // its three norms
  const LaunchIndex& expected = alone.host().Launches();
  EXPECT_TRUE(std::ranges::equal(launches.ThreadWork(second),
                                 expected.ThreadWork(expected.ThreadOf(100, 101))));
  EXPECT_EQ(windows, alone.loop().Windows().size());
  EXPECT_EQ(windows, 3u);  // one per step
}

}  // namespace
}  // namespace sightline
