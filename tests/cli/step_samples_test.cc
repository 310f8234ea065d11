// Tests for the samples the diff's verdict compares (diff/step_samples.h): each step's parts add up
// to its wall time and name their ranges; concurrent work is split evenly, a long item counts in
// every window it covers, garbage collection and the launching thread's waits are parts of their
// own.
#include "diff/step_samples.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "diff/baseline_file.h"
#include "diff/diff_report.h"
#include "diff/loop_verdicts.h"
#include "diff/verdict.h"
#include "diff/verdict_report.h"
#include "facts/kernel_category.h"
#include "reporters/reporter.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"
#include "verdict_loops.h"

namespace sightline {
namespace {

using namespace verdict_test;  // NOLINT(build/namespaces)

TEST(StepSamples, PartsAddUpToTheWallTimeAndNameTheRanges) {
  LoopSpec spec;
  spec.iterations = 6;
  const RunSamples run = SamplesOf(spec);
  ASSERT_EQ(run.iterations(), 6u);
  EXPECT_EQ(run.pattern, "step N");
  EXPECT_TRUE(run.Validate("run").ok()) << run.Validate("run").ToString();
  std::vector<std::string> labels;
  for (const StepPart& p : run.parts) labels.push_back(p.Label());
  const std::string mlp = "`mlp` " + GemmCategory();
  EXPECT_NE(std::find(labels.begin(), labels.end(), mlp), labels.end());
  // "attn 0" .. "attn 3" are one range, "attn N".
  const std::string attn =
      "`attn N` " + std::string(KernelCategoryName(ClassifyKernel(kAttention)));
  EXPECT_NE(std::find(labels.begin(), labels.end(), attn), labels.end());
  EXPECT_NE(std::find(labels.begin(), labels.end(), "GPU idle, host in synchronize"), labels.end());
  // The first iteration, exactly. Before the attention kernel starts at +10: launch calls over
  // [+1, +4) and [+6, +8), the sync from +9; after the GEMM, 2 ns of the sync, then host code.
  double sync = -1, launch = -1;
  for (size_t p = 0; p < run.parts.size(); ++p) {
    if (run.parts[p].Label() == "GPU idle, host in synchronize") sync = run.part_ns[p][0];
    if (run.parts[p].Label() == "GPU idle, host in launch") launch = run.part_ns[p][0];
  }
  EXPECT_DOUBLE_EQ(sync, 1 + 2);
  EXPECT_DOUBLE_EQ(launch, 3 + 2);
  double sum = 0;
  for (const std::vector<double>& v : run.part_ns) sum += v[0];
  EXPECT_DOUBLE_EQ(sum, run.wall_ns[0]);
}

TEST(StepSamples, ConcurrentWorkIsSplitEvenly) {
  // Two kernels of two ranges overlap for 100 ns on two streams: each gets 50 of those.
  TraceFixture f;
  f.Range("a", 0, 10).Range("b", 10, 20);
  f.Launch("gemm_a", 1, 2, 100, 300, {0, 7});
  f.Launch("gemm_b", 11, 12, 200, 400, {0, 8});
  f.Range("step 0", 0, 500);
  const Trace t = f.Build();
  const RunSamples run = Samples(t);
  ASSERT_EQ(run.iterations(), 1u);
  double a = -1, b = -1, idle = 0;
  for (size_t p = 0; p < run.parts.size(); ++p) {
    if (run.parts[p].range == "a") a = run.part_ns[p][0];
    if (run.parts[p].range == "b") b = run.part_ns[p][0];
    if (run.parts[p].kind == StepPart::Kind::kIdle) idle += run.part_ns[p][0];
  }
  EXPECT_DOUBLE_EQ(a, 150);
  EXPECT_DOUBLE_EQ(b, 150);
  EXPECT_DOUBLE_EQ(idle, 200);  // [0, 100) and [400, 500)
}

TEST(StepSamples, ALongItemCountsInEveryWindowItCovers) {
  // 100 steps of a 50 ns kernel, and one 2,000 ns copy on another stream over steps 10 to 29:
  // more items than are kept aside as long, so the copy is found by the long-item list.
  TraceFixture f;
  for (int i = 0; i < 100; ++i) {
    const TimeNs t = 1000 + i * 100;
    f.Launch("gemm", t + 1, t + 2, t + 10, t + 60);
    f.Range("step " + std::to_string(i), t, t + 100);
  }
  f.Memcpy(MemOpKind::kDtoH, 2000, 4000, 1 << 20, {0, 9});
  const Trace t = f.Build();
  const RunSamples run = Samples(t);
  ASSERT_EQ(run.iterations(), 100u);
  EXPECT_TRUE(run.Validate("run").ok()) << run.Validate("run").ToString();
  auto idle = [&](size_t i) {
    double v = 0;
    for (size_t p = 0; p < run.parts.size(); ++p) {
      if (run.parts[p].kind == StepPart::Kind::kIdle) v += run.part_ns[p][i];
    }
    return v;
  };
  EXPECT_DOUBLE_EQ(idle(5), 50);  // no copy: [0, 10) and [60, 100) of the window
  EXPECT_DOUBLE_EQ(idle(15), 0);  // the copy covers the whole window
  double copy = 0;
  for (size_t p = 0; p < run.parts.size(); ++p) {
    if (run.parts[p].what == "memcpy DtoH") copy = run.part_ns[p][15];
  }
  EXPECT_DOUBLE_EQ(copy, 50 + 25);  // alone for 50 ns, beside the kernel for 50 ns
}

TEST(StepSamples, GarbageCollectionWhileTheGpuIdlesIsItsOwnPart) {
  TraceFixture f;
  f.Launch("gemm", 1, 2, 10, 110);
  f.Gc(120, 170);
  f.Api("cudaStreamSynchronize", 160, 180);  // a sync inside the collection wins
  f.Range("step 0", 0, 200);
  const Trace t = f.Build();
  const RunSamples run = Samples(t);
  ASSERT_EQ(run.iterations(), 1u);
  double gc = -1, sync = -1;
  for (size_t p = 0; p < run.parts.size(); ++p) {
    if (run.parts[p].Label() == "GPU idle, host in garbage collection") gc = run.part_ns[p][0];
    if (run.parts[p].Label() == "GPU idle, host in synchronize") sync = run.part_ns[p][0];
  }
  EXPECT_DOUBLE_EQ(gc, 40);    // [120, 160)
  EXPECT_DOUBLE_EQ(sync, 20);  // [160, 180)
}

// The launching thread waiting for the GIL, then in a waiting OS call, while the GPU idles: two
// parts of their own, below a synchronize and a collection in precedence; another thread's wait
// does not count.
TEST(StepSamples, GilAndOsWaitsOfTheLaunchingThreadAreTheirOwnParts) {
  TraceFixture f;
  f.Launch("gemm", 1, 2, 10, 110);
  f.Gil(GilState::kWaited, 120, 150);
  f.OsCall("pthread_cond_wait", 140, 170);                       // the GIL wait wins on [140, 150)
  f.Api("cudaStreamSynchronize", 165, 180);                      // a sync wins on [165, 170)
  f.Gil(GilState::kWaited, 180, 200, {.pid = 100, .tid = 101});  // another thread
  f.Range("step 0", 0, 200);
  const Trace t = f.Build();
  const RunSamples run = Samples(t);
  ASSERT_EQ(run.iterations(), 1u);
  auto part = [&](const std::string& label) {
    for (size_t p = 0; p < run.parts.size(); ++p) {
      if (run.parts[p].Label() == label) return run.part_ns[p][0];
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(part("GPU idle, host in GIL wait"), 30);     // [120, 150)
  EXPECT_DOUBLE_EQ(part("GPU idle, host in OS wait"), 15);      // [150, 165)
  EXPECT_DOUBLE_EQ(part("GPU idle, host in synchronize"), 15);  // [165, 180)
  double sum = 0;
  for (const std::vector<double>& v : run.part_ns) sum += v[0];
  EXPECT_DOUBLE_EQ(sum, run.wall_ns[0]);
}

}  // namespace
}  // namespace sightline
