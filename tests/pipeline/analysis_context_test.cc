// Tests for the analysis context (analyses/common/analysis_context.h): facts computed once and
// shared, the one definition of exposed communication that the exposed_comm rule and the ranks
// analysis both use, the one median, and the registries the pipeline runs.
#include "analyses/common/analysis_context.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analyses/findings/findings.h"
#include "analyses/idle_gaps/idle_gaps.h"
#include "analyses/ranks/ranks.h"
#include "base/name_pattern.h"
#include "base/stats.h"
#include "pipeline/pipeline.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::TraceFixture;
using testing::Where;

constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs)";
constexpr const char* kAllGather = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgs)";
constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

const Fact* Evidence(const Finding& f, const std::string& key) {
  for (const Fact& e : f.evidence) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

// Two collectives that overlap each other on device 0 (streams 9 and 10) and a GEMM under part of
// them: the communication union is [0, 150) = 150 us, the GEMM covers 20 us of it, so 130 us of
// communication runs alone. Summing kernel durations instead would say 200 us and 180 us exposed.
Trace OverlappingCollectives() {
  TraceFixture f;
  f.Device(0);
  f.Kernel(kAllReduce, 0, 100'000, Where{0, 9});
  f.Kernel(kAllGather, 50'000, 150'000, Where{0, 10});
  f.Kernel(kGemm, 100'000, 120'000, Where{0, 7});
  f.Kernel(kGemm, 200'000, 210'000, Where{0, 7});
  return f.Build();
}

TEST(AnalysisContext, ExposedCommunicationHasOneDefinition) {
  const Trace t = OverlappingCollectives();
  AnalysisContext context(t);
  const CommSplit& c = context.kernels().Comm(0);
  EXPECT_EQ(c.comm_kernels, 2);
  EXPECT_EQ(c.comm_ns, 150'000);
  EXPECT_EQ(c.compute_ns, 30'000);
  EXPECT_EQ(c.overlap_ns, 20'000);
  EXPECT_EQ(c.exposed_ns(), 130'000);

  // The finding rule reports that number ...
  StatusOr<std::vector<Finding>> findings = ComputeFindings(context);
  ASSERT_TRUE(findings.ok()) << findings.status().ToString();
  auto rule = std::find_if(findings->begin(), findings->end(),
                           [](const Finding& f) { return f.id == "exposed_comm"; });
  ASSERT_NE(rule, findings->end());
  EXPECT_EQ(std::get<int64_t>(Evidence(*rule, "comm_ns")->value), 150'000);
  EXPECT_EQ(std::get<int64_t>(Evidence(*rule, "exposed_ns")->value), 130'000);
  EXPECT_EQ(rule->estimated_savings_ns, 130'000);

  // ... and so does the ranks analysis.
  StatusOr<RankProfile> p = ComputeRankProfile(context, "r0", 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->comm_ns, 150'000);
  EXPECT_EQ(p->overlap_ns, 20'000);
  EXPECT_EQ(p->comm_ns - p->overlap_ns, 130'000);
}

TEST(AnalysisContext, FactsAreComputedOnceAndShared) {
  const Trace t = TraceFixture()
                      .Launch("gemm", 0, 5, 10, 30)
                      .Launch("norm", 40, 45, 50, 60)
                      .Range("iteration 0", 0, 35)
                      .Range("iteration 1", 36, 70)
                      .Build();
  AnalysisContext context(t);
  StatusOr<const IterationsResult*> a = context.loop().Iterations();
  StatusOr<const IterationsResult*> b = context.loop().Iterations();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, *b);  // the same object: computed once
  ASSERT_NE(context.loop().MainSet(), nullptr);
  EXPECT_EQ(context.loop().MainSet(), &(*a)->sets[0]);
  ASSERT_EQ(context.loop().Windows().size(), 2u);
  EXPECT_EQ(context.loop().Windows()[1].it, &(*a)->sets[0].iterations[1]);
  EXPECT_EQ(context.loop().FindWindow(100, 50), 1);
  EXPECT_EQ(context.loop().WindowLabel(context.loop().Windows()[0]), "iteration 0");
  EXPECT_EQ(&context.host().Launches(), &context.host().Launches());
  EXPECT_EQ(context.gpu().TotalKernelTimeNs(), 30);
  EXPECT_FALSE(context.kernels().HasCommunication());
  EXPECT_EQ(context.kernels().Category(t.kernels.name[0]), ClassifyKernel("gemm"));
  EXPECT_FALSE(context.kernels().IsCommunication(t.kernels.name[0]));
  StatusOr<const IdleGapsResult*> g1 = CachedIdleGaps(context);
  StatusOr<const IdleGapsResult*> g2 = CachedIdleGaps(context);
  ASSERT_TRUE(g1.ok());
  EXPECT_EQ(*g1, *g2);
}

TEST(AnalysisContext, BadIterationRegexIsAnErrorOnceAndNoWindows) {
  const Trace t = TraceFixture().Kernel("gemm", 10, 30).Range("step 0", 0, 40).Build();
  AnalyzeOptions options;
  options.iterations_regex = "(unclosed";
  AnalysisContext context(t, options);
  EXPECT_FALSE(context.loop().Iterations().ok());
  EXPECT_FALSE(ComputeFindings(context).ok());
  EXPECT_EQ(context.loop().MainSet(), nullptr);
  // Without iterations the rules look at each device's whole span.
  ASSERT_EQ(context.loop().Windows().size(), 1u);
  EXPECT_EQ(context.loop().WindowLabel(context.loop().Windows()[0]), "whole trace");
}

TEST(AnalysisContext, BlockingCallsArePerProcessAndMerged) {
  const Trace t = TraceFixture()
                      .Api("cudaDeviceSynchronize", 0, 10)
                      .Api("cudaMemcpy", 5, 20)
                      .Api("cudaMemcpyAsync", 30, 40)
                      .Api("cudaStreamSynchronize", 50, 60, ApiKind::kRuntime, {200, 200})
                      .Build();
  AnalysisContext context(t);
  EXPECT_EQ(context.host().BlockingCalls(100), (std::vector<Interval>{{0, 20}}));
  EXPECT_EQ(context.host().BlockingCalls(200), (std::vector<Interval>{{50, 60}}));
  EXPECT_TRUE(context.host().BlockingCalls(300).empty());
}

TEST(AnalysisContext, LaunchingThreadsPerProcessMostLaunchesFirst) {
  const Trace t = TraceFixture()
                      .Launch("a", 0, 1, 2, 3, {}, {100, 101})
                      .Launch("b", 4, 5, 6, 7, {}, {100, 102})
                      .Launch("c", 8, 9, 10, 11, {}, {100, 102})
                      .Launch("d", 12, 13, 14, 15, {}, {200, 201})
                      .Api("cudaMalloc", 20, 30, ApiKind::kRuntime, {100, 103})
                      .Build();
  AnalysisContext context(t);
  const std::vector<LaunchingThread>& p100 = context.host().LaunchingThreads(100);
  ASSERT_EQ(p100.size(), 2u);  // thread 103 only allocates
  EXPECT_EQ(p100[0].tid, 102);
  EXPECT_EQ(p100[0].launches, 2);
  EXPECT_EQ(p100[1].tid, 101);
  EXPECT_EQ(context.host().LaunchingThreads(-1).size(), 3u);
  EXPECT_EQ(context.host().MainLaunchingThread().tid, 102);
  EXPECT_EQ(context.host().MainLaunchingThread(200).tid, 201);
  EXPECT_EQ(context.host().MainLaunchingThread(300).tid, -1);
}

TEST(AnalysisContext, GilUnionsPerThreadAndGcByProcess) {
  const Trace t = TraceFixture()
                      .Gil(GilState::kHeld, 0, 10, {100, 101})
                      .Gil(GilState::kHeld, 5, 20, {100, 101})
                      .Gil(GilState::kWaited, 10, 30, {100, 102})
                      .Gil(GilState::kHeld, 30, 40, {100, 102})
                      .Gc(50, 60, {100, 101})
                      .Gc(55, 70, {100, 102})  // another thread of the process: merged by time
                      .Gc(100, 110, {200, 200})
                      .Build();
  AnalysisContext context(t);
  EXPECT_TRUE(context.host().HasGil());
  EXPECT_EQ(context.host().GilHeld(100, 101), (std::vector<Interval>{{0, 20}}));
  EXPECT_TRUE(context.host().GilWaited(100, 101).empty());
  EXPECT_EQ(context.host().GilWaited(100, 102), (std::vector<Interval>{{10, 30}}));
  EXPECT_EQ(context.host().GilHeld(100, 102), (std::vector<Interval>{{30, 40}}));
  EXPECT_TRUE(context.host().GilHeld(300, 300).empty());
  EXPECT_EQ(context.host().GilThreads().size(), 2u);
  EXPECT_EQ(context.host().GcIntervals(100), (std::vector<Interval>{{50, 70}}));
  EXPECT_EQ(context.host().GcIntervals(-1), (std::vector<Interval>{{50, 70}, {100, 110}}));
}

TEST(TraceBuilder, ThreadRolesAndTheGilTable) {
  TraceFixture f;
  f.Thread(100, 100, "python3").Thread(100, 101, "NSys PySampling").Thread(100, 102, "worker");
  f.Launch("gemm", 0, 5, 10, 20, {}, {100, 100});
  f.Gil(GilState::kWaited, 30, 40, {100, 100}).Gil(GilState::kHeld, 0, 30, {100, 101});
  const Trace t = f.Build();
  ASSERT_EQ(t.threads.size(), 3u);
  EXPECT_EQ(t.threads[0].role, ThreadRole::kLaunching);
  EXPECT_EQ(t.threads[1].role, ThreadRole::kProfiler);
  EXPECT_EQ(t.threads[2].role, ThreadRole::kOther);
  ASSERT_EQ(t.gil.size(), 2u);
  EXPECT_EQ(t.gil.start_ns[0], 0);  // sorted by start
  EXPECT_EQ(t.gil.state[0], GilState::kHeld);
  EXPECT_EQ(t.end_ns(), 40);  // part of the span
  EXPECT_EQ(t.ranges.size(), 0u);
}

TEST(Statistics, MedianIsTheMeanOfTheMiddleTwoForAnEvenCount) {
  EXPECT_EQ(Median(std::vector<int64_t>{}), 0);
  EXPECT_EQ(Median(std::vector<int64_t>{7}), 7);
  EXPECT_EQ(Median(std::vector<int64_t>{4, 1, 3, 2}), 2.5);  // not the upper median 3
  EXPECT_EQ(Median(std::vector<double>{5, 1, 3}), 3);
  std::vector<int64_t> v = {9, 2, 7, 4, 5, 6};
  std::vector<int64_t> sorted = v;
  EXPECT_EQ(Median(v), ComputeDurationStats(sorted).median);  // one definition
}

TEST(NamePattern, DigitRunsBecomeN) {
  EXPECT_EQ(DigitRunsToN("ProfilerStep#12"), "ProfilerStep#N");
  EXPECT_EQ(DigitRunsToN("layer3.mlp77"), "layerN.mlpN");
  EXPECT_EQ(DigitRunsToN("no digits"), "no digits");
  EXPECT_EQ(DigitRunsToN(""), "");
}

TEST(Registries, EveryAnalysisHasANameAndTheMultiTraceOnesAreRegistered) {
  std::vector<std::string> names;
  for (const AnalysisEntry& a : Analyses()) names.push_back(a.name);
  for (const MultiTraceAnalysisEntry& a : MultiTraceAnalyses()) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"overview", "kernel_summary", "api_summary",
                                             "memops_summary", "iterations", "nvtx_projection",
                                             "phases", "cuda_graphs", "idle_gaps", "gpu_metrics",
                                             "memory", "processes", "threads", "floor", "findings",
                                             "run_processes", "ranks", "serving", "diff"}));
}

TEST(Pipeline, DiffRunsThroughTheRegistryAndCarriesTheGate) {
  const std::string dir = std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/";
  AnalyzeOptions options;
  options.diff.fail_if_slower_pct = 0.0;  // any growth fails
  StatusOr<Report> r = DiffFiles(dir + "llama_decode_h100.nsys.sqlite",
                                 dir + "llama_decode_h100.pytorch.json.gz", options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(r->inputs[0].label, "baseline");
  EXPECT_EQ(r->inputs[1].label, "candidate");
  ASSERT_GE(r->sections.size(), 2u);
  EXPECT_EQ(r->sections[0].key, "diff_verdict");  // the verdict opens the report
  EXPECT_EQ(r->sections[1].key, "diff_summary");
  for (const Section& s : r->sections) EXPECT_EQ(s.input, -1) << s.key;  // no per-trace sections
  // Both traces have 33 iterations, so the verdict decides. The PyTorch trace times the same work
  // +0.2% per iteration (median), but its interval holds 0, as the step time's does: over a 0%
  // threshold the data cannot tell (the sums' gate said "fail" for +0.11%).
  EXPECT_FALSE(r->gate.failed);
  EXPECT_TRUE(r->gate.undecided);
  EXPECT_NE(r->gate.message.find("straddles the threshold +0.0%"), std::string::npos)
      << r->gate.message;
  EXPECT_NE(r->gate.message.find("iterations per side would likely decide"), std::string::npos);
}

}  // namespace
}  // namespace sightline
