// Steps found without step ranges (facts/inferred_steps.h; docs/metrics.md, "Steps without
// ranges"): by kernel mix, a generate() call's prefill is a loop of its own beside the decode
// steps, and the set-up before it in none; graphs traced as a whole (nsys's default) count as one
// step's graphs when their GPU time per replay agrees; a replay step ends before the next call's
// prefill.
#include <gtest/gtest.h>

#include <string>

#include "facts/iterations.h"
#include "facts/trace_facts.h"
#include "model/trace_builder.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::TraceFixture;

// `calls` generate() calls on one thread, each: a set-up step (one "arange" kernel, then a
// synchronize), a prefill (5 "gemm_big" + 5 "norm" kernels), then `decodes` decode steps (5
// "gemm_small" + 5 "norm"), every step ending in a cudaStreamSynchronize. Decode steps last 1'000
// ns, the prefill 3'000.
Trace GenerateCalls(int calls, int decodes) {
  TraceFixture f;
  f.Device(0);
  TimeNs t = 0;
  auto step = [&](const char* gemm, int gemms, int norms, TimeNs length) {
    for (int i = 0; i < gemms + norms; ++i) {
      const TimeNs a = t + 10 * i;
      f.Launch(i < gemms ? gemm : "norm", a, a + 5, a + 6, a + 8);
    }
    f.Api("cudaStreamSynchronize", t + length - 100, t + length);
    t += length;
  };
  for (int c = 0; c < calls; ++c) {
    step("arange", 1, 0, 500);
    step("gemm_big", 5, 5, 3'000);
    for (int d = 0; d < decodes; ++d) step("gemm_small", 5, 5, 1'000);
  }
  return f.Build();
}

TEST(InferredSteps, PrefillIsALoopBesideTheDecodeStepsAndSetUpInNone) {
  const Trace trace = GenerateCalls(/*calls=*/3, /*decodes=*/10);
  TraceFacts facts(trace);
  StatusOr<IterationsResult> r = ComputeIterations(facts, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "synchronize cadence");
  ASSERT_EQ(r->sets.size(), 1u);
  EXPECT_EQ(r->sets[0].iterations.size(), 30u);  // 3 calls x 10 decode steps
  for (const Iteration& it : r->sets[0].iterations) EXPECT_EQ(it.launched.kernel_count, 10);
  ASSERT_EQ(r->other_loops.size(), 1u);
  const IterationSet& prefill = r->other_loops[0];
  EXPECT_EQ(prefill.iterations.size(), 3u);
  EXPECT_EQ(prefill.pattern, "gemm_big [opens each run of the loop]");
  for (const Iteration& it : prefill.iterations) EXPECT_EQ(it.wall_ns(), 3'000);
  // The set-up steps (1 kernel against the loop's 10) are in no loop, counted: the second and the
  // third call's (a step runs from one synchronization to the next, and the first call's set-up
  // comes before the first).
  EXPECT_EQ(r->other_steps, 2);
  EXPECT_EQ(r->other_steps_ns, 2 * 500);
}

TEST(InferredSteps, OneLonePrefillIsCountedNotALoop) {
  const Trace trace = GenerateCalls(/*calls=*/1, /*decodes=*/8);
  TraceFacts facts(trace);
  StatusOr<IterationsResult> r = ComputeIterations(facts, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->sets.size(), 1u);
  EXPECT_EQ(r->sets[0].iterations.size(), 8u);
  EXPECT_TRUE(r->other_loops.empty());
  EXPECT_EQ(r->other_steps, 1);  // the prefill (the set-up is before the first synchronize)
  EXPECT_EQ(r->other_steps_ns, 3'000);
}

// A loop replaying two graphs traced as a whole (no kernels per replay): graph 1 and graph 2 in
// turn, both 200 ns of GPU time per replay, and a third graph of 900 ns replayed in between now
// and then. The step is either of the first two; the third is not of its size.
TEST(InferredSteps, WholeGraphsOfOneStepAgreeInGpuTimePerReplay) {
  TraceFixture f;
  f.Device(0);
  int correlation = 900;
  for (int step = 0; step < 12; ++step) {
    const TimeNs base = 10'000 + step * 1'000;
    const int graph = step % 6 == 5 ? 3 : 1 + step % 2;
    const TimeNs gpu = graph == 3 ? 900 : 200;
    f.Api("cudaGraphLaunch", base + 1, base + 5, ApiKind::kRuntime, {}, correlation);
    f.Kernel(WholeGraphName(graph), base + 10, base + 10 + gpu, {}, correlation++);
  }
  const Trace trace = f.Build();
  TraceFacts facts(trace);
  StatusOr<IterationsResult> r = ComputeIterations(facts, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "graph replays");
  ASSERT_EQ(r->sets.size(), 1u);
  EXPECT_EQ(r->sets[0].iterations.size(), 10u);  // 12 replays less graph 3's two
  EXPECT_NE(r->sets[0].pattern.find("1 other graph of its size"), std::string::npos)
      << r->sets[0].pattern;
}

// generate() calls replaying a graph per decode step (traced as a whole): each step launches
// the graph, then 3 "sample" kernels, then synchronizes; each call first runs a prefill of 20
// "gemm_big" kernels and synchronizes. The replay step before a call's first one would hold the
// next call's prefill: it ends at its own synchronization, and the prefill is a stretch apart.
TEST(InferredSteps, ReplayStepsLeaveTheNextCallsPrefillApart) {
  TraceFixture f;
  f.Device(0);
  TimeNs t = 1'000;
  int correlation = 500;
  for (int call = 0; call < 3; ++call) {
    for (int i = 0; i < 20; ++i, t += 20) f.Launch("gemm_big", t, t + 5, t + 6, t + 15);
    f.Api("cudaStreamSynchronize", t, t + 100);
    t += 200;
    for (int step = 0; step < 8; ++step) {
      f.Api("cudaGraphLaunch", t, t + 5, ApiKind::kRuntime, {}, correlation);
      f.Kernel(WholeGraphName(1), t + 10, t + 210, {}, correlation++);
      t += 300;
      for (int i = 0; i < 3; ++i, t += 20) f.Launch("sample", t, t + 5, t + 6, t + 15);
      f.Api("cudaStreamSynchronize", t, t + 100);
      t += 600;
    }
  }
  const Trace trace = f.Build();
  TraceFacts facts(trace);
  StatusOr<IterationsResult> r = ComputeIterations(facts, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "graph replays");
  ASSERT_EQ(r->sets.size(), 1u);
  ASSERT_EQ(r->sets[0].iterations.size(), 24u);  // 3 calls x 8 replays
  // The graph's row and 3 samples each (the last step ends with its replay's GPU work).
  for (size_t i = 0; i + 1 < r->sets[0].iterations.size(); ++i) {
    EXPECT_EQ(r->sets[0].iterations[i].launched.kernel_count, 4) << i;
  }
  // The prefills of the second and third calls, cut from the steps before them; the first call's
  // comes before the first replay (start-up).
  ASSERT_EQ(r->other_loops.size(), 1u);
  EXPECT_EQ(r->other_loops[0].iterations.size(), 2u);
  EXPECT_EQ(r->other_loops[0].pattern, "gemm_big [opens each run of the loop]");
  EXPECT_EQ(r->other_steps, 0);
}

}  // namespace
}  // namespace sightline
