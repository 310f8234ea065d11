// Tests for the iterations analysis (facts/iterations.h): finding iteration ranges by name,
// per-iteration GPU work, the distribution and outliers.
#include "facts/iterations.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include "analyses/iterations/iterations_section.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::HostThread;
using testing::TraceFixture;

IterationsResult Find(const Trace& t, std::string regex = "") {
  IterationsOptions options;
  options.name_regex = std::move(regex);
  return testing::ValueOrDie(ComputeIterations(Ctx(t)->facts(), options));
}

TEST(Iterations, DefaultNames) {
  RE2::Options options;
  options.set_case_sensitive(false);
  const RE2 re(kDefaultIterationRegex, options);
  ASSERT_TRUE(re.ok()) << re.error();
  for (const char* yes :
       {"ProfilerStep#0", "ProfilerStep#12", "iteration", "Iteration 5", "iteration_7", "iter 3",
        "iter_12", "step", "Step#3", "step 10", "decode_step", "decode_step_17", "train_step 2",
        "[Executor] _forward_step 15: 0 ctx reqs, 32 gen reqs", "graph_step_12", "eager_step_3",
        "my_step_5", "execute_context_1(888_788544)_generation_0(0)"}) {
    EXPECT_TRUE(RE2::FullMatch(yes, re)) << yes;
  }
  for (const char* no : {"iterator", "steps", "Optimizer.step#SGD.step", "forward", "aten::mm",
                         "ProfilerStep", "my_step", "stepper", "graph_steps_1", "graph_step_x"}) {
    EXPECT_FALSE(RE2::FullMatch(no, re)) << no;
  }
}

TEST(Iterations, ProfilerStepsWithGpuWork) {
  // Three PyTorch profiler steps; cpu ops nest inside. Step 1 launches two overlapping kernels.
  Trace t = TraceFixture()
                .Range("ProfilerStep#3", 0, 100, RangeKind::kUserAnnotation)
                .Range("aten::mm", 10, 20, RangeKind::kCpuOp)
                .Launch("gemm", 11, 12, 20, 60)
                .Range("ProfilerStep#4", 100, 200, RangeKind::kUserAnnotation)
                .Launch("a", 110, 111, 120, 150)
                .Launch("b", 120, 121, 140, 170)  // overlaps a on another stream
                .Launch("c", 190, 191, 195, 230)  // runs past the step's end
                .Range("ProfilerStep#5", 200, 400, RangeKind::kUserAnnotation)
                .Launch("d", 300, 301, 310, 320)
                .Build();
  const IterationsResult r = Find(t);
  ASSERT_EQ(r.sets.size(), 1u);
  const IterationSet& s = r.sets[0];
  EXPECT_EQ(s.pattern, "ProfilerStep#N");
  ASSERT_EQ(s.iterations.size(), 3u);
  EXPECT_EQ(s.iterations[0].wall_ns(), 100);
  EXPECT_EQ(s.iterations[2].wall_ns(), 200);
  EXPECT_EQ(t.str(s.iterations[1].name), "ProfilerStep#4");

  const Iteration& it1 = s.iterations[1];
  EXPECT_EQ(it1.launched.kernel_count, 3);
  EXPECT_EQ(it1.launched.kernel_time_ns, 30 + 30 + 35);
  EXPECT_EQ(it1.gpu_busy_launched_ns, (170 - 120) + (230 - 195));  // union
  EXPECT_EQ(it1.launched.span_ns(), 230 - 120);
  // Within [100, 200): 120..170 and 195..200.
  EXPECT_EQ(it1.gpu_busy_in_window_ns, 50 + 5);
  // Step 2's window sees the tail of kernel c (200..230) and d.
  EXPECT_EQ(s.iterations[2].gpu_busy_in_window_ns, 30 + 10);
  EXPECT_EQ(s.iterations[2].gpu_busy_launched_ns, 10);

  EXPECT_EQ(s.wall.median, 100);
  EXPECT_EQ(s.wall.max, 200);
  // MAD = 0, so the threshold is 1.5 x median and step 5 (2x) is an outlier.
  EXPECT_DOUBLE_EQ(s.outlier_threshold_ns, 150);
  EXPECT_EQ(s.outliers, 1);
  EXPECT_TRUE(s.iterations[2].outlier);
}

TEST(Iterations, NvtxIterationsChosenOverWrapperAndOtherPatterns) {
  TraceFixture f;
  f.Range("iteration_loop", 0, 10'000);  // matches too, but only once
  for (int i = 0; i < 4; ++i) {
    const TimeNs s = 100 + i * 1000;
    f.Range("iteration " + std::to_string(i), s, s + 900);
    f.Range("step", s + 10, s + 20);  // once per iteration, shorter in total
  }
  Trace t = f.Build();
  const IterationsResult r = Find(t);
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0].pattern, "iteration N");
  EXPECT_EQ(r.sets[0].iterations.size(), 4u);
  EXPECT_EQ(r.matching_ranges, 9);
}

TEST(Iterations, RegexOverride) {
  TraceFixture f;
  for (int i = 0; i < 3; ++i) f.Range("fwd_" + std::to_string(i), i * 100, i * 100 + 50);
  f.Range("FWD_9", 400, 450);  // the override is case-sensitive
  Trace t = f.Build();
  EXPECT_TRUE(Find(t).sets.empty());
  const IterationsResult r = Find(t, "fwd_\\d+");
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_FALSE(r.default_regex);
  EXPECT_EQ(r.sets[0].iterations.size(), 3u);
  EXPECT_EQ(r.sets[0].pattern, "fwd_\\d+");
  // Full match: a prefix is not enough.
  EXPECT_TRUE(Find(t, "fwd").sets.empty());

  IterationsOptions bad;
  bad.name_regex = "step[";
  StatusOr<IterationsResult> err = ComputeIterations(Ctx(t)->facts(), bad);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), StatusCode::kInvalidArgument);
}

// std::regex recursed once per character: a 25 KB range name overflowed the stack, with the
// default pattern and with a user's. RE2 matches names of any length (up to the 64 KiB a name
// keeps) without recursion.
TEST(Iterations, LongNamesDoNotExhaustTheStack) {
  TraceFixture f;
  const std::string tail(60000, 'x');
  for (int i = 0; i < 3; ++i) {
    f.Range("step " + std::to_string(i) + tail, i * 100, i * 100 + 50);
  }
  Trace t = f.Build();
  IterationsResult r = Find(t);
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0].iterations.size(), 3u);
  r = Find(t, "(s|t|e|p| |\\d|x)*");  // nested repeats over the whole name
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0].iterations.size(), 3u);
  // A pattern RE2 does not take (a back-reference) is a usage error that says so.
  IterationsOptions bad;
  bad.name_regex = "(step)\\1";
  StatusOr<IterationsResult> err = ComputeIterations(Ctx(t)->facts(), bad);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.status().message().find("RE2 syntax"), std::string::npos);
}

TEST(Iterations, OutliersUseMadWithARatioFloor) {
  TraceFixture f;
  const DurationNs walls[] = {100, 104, 96, 100, 102, 98, 140, 100, 400};
  TimeNs s = 0;
  for (DurationNs w : walls) {
    f.Range("decode_step", s, s + w);
    s += 1000;
  }
  Trace t = f.Build();
  const IterationsResult r = Find(t);
  ASSERT_EQ(r.sets.size(), 1u);
  const IterationSet& set = r.sets[0];
  EXPECT_EQ(set.wall.median, 100);
  EXPECT_DOUBLE_EQ(set.wall_mad_ns, 2);  // deviations 0,4,4,0,2,2,40,0,300
  // 3 x 1.4826 x 2 < 50, so the floor 1.5 x median applies: 140 is not an outlier, 400 is.
  EXPECT_DOUBLE_EQ(set.outlier_threshold_ns, 150);
  EXPECT_EQ(set.outliers, 1);
  EXPECT_TRUE(set.iterations[8].outlier);
  EXPECT_FALSE(set.iterations[6].outlier);
}

TEST(Iterations, OneSetPerProcessFromItsBusiestThread) {
  TraceFixture f;
  for (int i = 0; i < 3; ++i)
    f.Range("step", i * 100, i * 100 + 50, RangeKind::kNvtxPushPop, {1, 1});
  f.Range("step", 0, 10, RangeKind::kNvtxPushPop, {1, 2});  // fewer on another thread
  for (int i = 0; i < 5; ++i)
    f.Range("step", i * 100, i * 100 + 80, RangeKind::kNvtxPushPop, {2, 7});
  Trace t = f.Build();
  const IterationsResult r = Find(t);
  ASSERT_EQ(r.sets.size(), 2u);
  EXPECT_EQ(r.sets[0].pid, 2);  // most iterations first
  EXPECT_EQ(r.sets[0].iterations.size(), 5u);
  EXPECT_EQ(r.sets[1].pid, 1);
  EXPECT_EQ(r.sets[1].tid, 1);
  EXPECT_EQ(r.sets[1].iterations.size(), 3u);
}

TEST(Iterations, TensorRtLlmForwardSteps) {
  TraceFixture f;
  f.Range("[Executor] _forward_step 7: 1 ctx reqs, 0 gen reqs", 0, 5000);
  f.Range("[Executor] _forward_step 8: 0 ctx reqs, 1 gen reqs", 6000, 7000);
  Trace t = f.Build();
  const IterationsResult r = Find(t);
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0].pattern, "[Executor] _forward_step N: N ctx reqs, N gen reqs");
  EXPECT_EQ(r.sets[0].iterations.size(), 2u);
  EXPECT_EQ(r.sets[0].outlier_threshold_ns, 0);  // fewer than 3: no outlier test
}

TEST(Iterations, SectionWithoutIterationsSaysSo) {
  Trace t = TraceFixture().Range("forward", 0, 10).Build();
  Report report;
  ASSERT_TRUE(RunIterationsSection(*Ctx(t, AnalyzeOptions{}), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  EXPECT_EQ(s.key, "iterations");
  ASSERT_FALSE(s.facts.empty());
  EXPECT_EQ(std::get<int64_t>(s.facts[0].value), 0);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_TRUE(s.tables.empty());
}

TEST(Iterations, SectionTablesAndSeries) {
  TraceFixture f;
  for (int i = 0; i < 20; ++i) {
    const TimeNs s = i * 1000;
    f.Range("ProfilerStep#" + std::to_string(i), s, s + (i == 0 ? 900 : 300),
            RangeKind::kUserAnnotation);
    f.Launch("k", s + 1, s + 2, s + 10, s + 110);
  }
  Trace t = f.Build();
  Report report;
  AnalyzeOptions options;
  options.top_n = 5;
  ASSERT_TRUE(RunIterationsSection(*Ctx(t, options), 0, report).ok());
  const Section& s = report.sections[0];
  const Table* all = nullptr;
  const Table* outliers = nullptr;
  for (const Table& tb : s.tables) {
    if (tb.key == "iterations") all = &tb;
    if (tb.key == "outliers") outliers = &tb;
  }
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->rows.size(), 5u);
  EXPECT_EQ(all->total_rows, 20);
  // The slow first step is the warm-up, not an outlier: said in the table and the facts.
  EXPECT_EQ(outliers, nullptr);
  EXPECT_EQ(std::get<std::string>(all->rows[0].back()), "warm-up");
  bool warmup_fact = false;
  for (const Fact& fact : s.facts) {
    if (fact.key == "warmup") warmup_fact = std::get<int64_t>(fact.value) == 1;
  }
  EXPECT_TRUE(warmup_fact);
  ASSERT_FALSE(s.series.empty());
  EXPECT_EQ(s.series[0].y.size(), 20u);
}

// Warm-up: the longest prefix in the first half that ends over the steady state's threshold and
// is at least half over it; a slow step later in the loop stays an outlier.
TEST(Iterations, WarmupIsTheSlowPrefixAndLaterStallsStayOutliers) {
  TraceFixture f;
  const std::vector<TimeNs> walls = {900, 800, 300, 850, 300, 300, 300, 300,
                                     300, 300, 300, 300, 300, 900, 300, 300};
  TimeNs at = 0;
  for (size_t i = 0; i < walls.size(); ++i) {
    f.Range("ProfilerStep#" + std::to_string(i), at, at + walls[i], RangeKind::kUserAnnotation);
    at += walls[i] + 10;
  }
  Trace t = f.Build();
  auto ctx = Ctx(t);
  const IterationSet* set = ctx->loop().MainSet();
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->warmup, 4);  // 900, 800, 300, 850: 3 of 4 over
  EXPECT_EQ(set->warmup_ns, 900 + 800 + 300 + 850);
  EXPECT_EQ(set->outliers, 1);  // the 900 at step 13
  EXPECT_TRUE(set->iterations[13].outlier);
  EXPECT_FALSE(set->iterations[0].outlier);
  // The loop windows (what the findings read) are the steady state's.
  ASSERT_EQ(ctx->loop().Windows().size(), walls.size() - 4);
  EXPECT_EQ(ctx->loop().Windows().front().it, &set->iterations[4]);
}

}  // namespace
}  // namespace sightline
