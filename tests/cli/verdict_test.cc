// Tests for the diff's verdict (diff/verdict.h, diff/step_samples.h, diff/baseline_file.h): a
// planted slowdown is called slower and put where it was planted; runs from one distribution are
// not slower; a change near the threshold cannot be told; several runs per side widen the
// interval; a saved baseline reads back as written.
#include "diff/verdict.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "diff/baseline_file.h"
#include "diff/diff_report.h"
#include "diff/loop_verdicts.h"
#include "diff/step_samples.h"
#include "diff/verdict_report.h"
#include "facts/kernel_category.h"
#include "reporters/reporter.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

constexpr char kAttention[] = "flash_fwd_kernel";
constexpr char kGemm[] = "ampere_sgemm_128x64_nn";

// One run of a decode-like loop. Each "step N" range holds an "attn N" range that launches the
// attention kernel and an "mlp" range that launches the GEMM, then a cudaStreamSynchronize until
// the GEMM ends, then host work (Python) with the GPU idle. Durations are the given means times
// (1 + noise * a standard normal draw), from `seed`; `run_factor` scales every duration (a slower
// or faster machine for the whole run).
struct LoopSpec {
  int iterations = 40;
  double attn_ns = 1000, mlp_ns = 3000, host_ns = 500;
  double noise = 0.02;
  double run_factor = 1.0;
  uint64_t seed = 1;
  double host_noise = -1;  // the host code's own noise; < 0: `noise`
};

Trace BuildLoop(const LoopSpec& spec) {
  TraceFixture f;
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> z(0.0, 1.0);
  auto draw = [&](double mean, double noise) {
    const double v = mean * spec.run_factor * (1 + noise * z(rng));
    return static_cast<DurationNs>(std::max(1.0, std::round(v)));
  };
  const double host_noise = spec.host_noise < 0 ? spec.noise : spec.host_noise;
  TimeNs t = 10'000;
  for (int i = 0; i < spec.iterations; ++i) {
    const TimeNs step = t;
    const DurationNs attn = draw(spec.attn_ns, spec.noise), mlp = draw(spec.mlp_ns, spec.noise);
    const DurationNs host = draw(spec.host_ns, host_noise);
    // attn: launched at +1, runs [+10, +10 + attn).
    f.Range("attn " + std::to_string(i % 4), step, step + 5);
    f.Launch(kAttention, step + 1, step + 4, step + 10, step + 10 + attn);
    // mlp: launched at +6, runs right after attention.
    f.Range("mlp", step + 5, step + 9);
    const TimeNs mlp_start = step + 10 + attn, mlp_end = mlp_start + mlp;
    f.Launch(kGemm, step + 6, step + 8, mlp_start, mlp_end);
    f.Api("cudaStreamSynchronize", step + 9, mlp_end + 2);
    const TimeNs end = mlp_end + 2 + host;
    f.Range("step " + std::to_string(i), step, end);
    t = end;
  }
  return f.Build();
}

RunSamples Samples(const Trace& trace) {
  return testing::ValueOrDie(CollectRunSamples(*Ctx(trace)));
}

RunSamples SamplesOf(const LoopSpec& spec) { return Samples(BuildLoop(spec)); }

VerdictResult Verdict(const std::vector<RunSamples>& b, const std::vector<RunSamples>& a,
                      std::optional<double> threshold) {
  VerdictOptions o;
  o.threshold_pct = threshold;
  return ComputeVerdict(b, a, o);
}

std::string GemmCategory() { return KernelCategoryName(ClassifyKernel(kGemm)); }

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

TEST(Verdict, PlantedGemmSlowdownIsSlowerAndAttributedToMlp) {
  LoopSpec before;
  LoopSpec after = before;
  after.seed = 2;
  after.mlp_ns *= 1.10;  // +300 ns on a ~4.5 us step: about +6.7%
  const VerdictResult v = Verdict({SamplesOf(before)}, {SamplesOf(after)}, 5.0);
  ASSERT_TRUE(v.available);
  EXPECT_EQ(v.decision, VerdictDecision::kSlower) << v.sentence << " / " << v.decision_reason;
  EXPECT_NEAR(v.median_change_pct.value, 6.7, 1.0);
  EXPECT_GT(v.median_change_pct.lo, 5.0);
  EXPECT_LT(v.median_change_pct.lo, v.median_change_pct.value);
  EXPECT_GT(v.median_change_pct.hi, v.median_change_pct.value);
  ASSERT_FALSE(v.parts.empty());
  const std::string mlp = "`mlp` " + GemmCategory();
  EXPECT_EQ(v.parts[0].label, mlp);  // the largest part of the change
  EXPECT_TRUE(v.parts[0].points.excludes_zero());
  EXPECT_NEAR(v.parts[0].points.value, v.mean_change_pct.value, 1.0);
  // The parts add up to the change in mean step time.
  double points = 0;
  for (const VerdictPart& p : v.parts) points += p.points.value;
  EXPECT_NEAR(points, v.mean_change_pct.value, 1e-9);
  // Attention did not change: its interval holds 0.
  const VerdictPart* attn = nullptr;
  for (const VerdictPart& p : v.ranges) {
    if (p.range == "attn N") attn = &p;
  }
  ASSERT_NE(attn, nullptr);
  EXPECT_FALSE(attn->points.excludes_zero());
  // The sentence names the change and where it went.
  EXPECT_EQ(v.sentence.rfind("Slower: step time +", 0), 0u) << v.sentence;
  EXPECT_NE(v.sentence.find("from " + mlp), std::string::npos) << v.sentence;
  EXPECT_EQ(v.sentence.find("attn"), std::string::npos) << v.sentence;
  EXPECT_FALSE(v.iterations_to_decide.has_value());
}

TEST(Verdict, SameDistributionIsNotSlowerForEverySeed) {
  for (uint64_t seed = 10; seed < 16; ++seed) {
    LoopSpec before, after;
    before.seed = seed;
    after.seed = seed + 100;
    const VerdictResult v = Verdict({SamplesOf(before)}, {SamplesOf(after)}, 5.0);
    EXPECT_EQ(v.decision, VerdictDecision::kNotSlower) << seed << ": " << v.sentence;
    EXPECT_LT(v.median_change_pct.lo, v.median_change_pct.hi);
    EXPECT_LT(std::abs(v.median_change_pct.value), 2.0) << seed;
  }
}

TEST(Verdict, ChangeNearTheThresholdCannotTellAndSaysHowManyIterations) {
  LoopSpec before;
  before.noise = 0.10;
  before.iterations = 20;
  LoopSpec after = before;
  after.seed = 7;
  after.mlp_ns *= 1.075;  // about +5%
  const VerdictResult v = Verdict({SamplesOf(before)}, {SamplesOf(after)}, 5.0);
  EXPECT_EQ(v.decision, VerdictDecision::kCannotTell) << v.sentence;
  EXPECT_LT(v.median_change_pct.lo, 5.0);
  EXPECT_GT(v.median_change_pct.hi, 5.0);
  ASSERT_TRUE(v.iterations_to_decide.has_value());
  EXPECT_GT(*v.iterations_to_decide, 20);
  EXPECT_FALSE(v.runs_to_decide.has_value());  // one run per side
  EXPECT_EQ(v.sentence.rfind("Cannot tell: ", 0), 0u) << v.sentence;

  Report report;
  EXPECT_TRUE(SetGateFromVerdict(v, report));
  EXPECT_TRUE(report.gate.undecided);
  EXPECT_FALSE(report.gate.failed);
  EXPECT_NE(report.gate.message.find("straddles"), std::string::npos) << report.gate.message;
}

TEST(Verdict, TooFewIterationsCannotTell) {
  LoopSpec before;
  before.iterations = 3;
  LoopSpec after = before;
  after.mlp_ns *= 2;  // a large change, but three iterations give no spread to trust
  const VerdictResult v = Verdict({SamplesOf(before)}, {SamplesOf(after)}, 5.0);
  EXPECT_EQ(v.decision, VerdictDecision::kCannotTell);
  EXPECT_NE(v.decision_reason.find("at least 5"), std::string::npos) << v.decision_reason;
  ASSERT_TRUE(v.iterations_to_decide.has_value());
  EXPECT_EQ(*v.iterations_to_decide, 5);
}

TEST(Verdict, NoIterationsMeansNoVerdict) {
  TraceFixture f;
  f.Kernel("gemm", 0, 100);
  const Trace t = f.Build();
  const VerdictResult v = Verdict({Samples(t)}, {SamplesOf({})}, 5.0);
  EXPECT_FALSE(v.available);
  EXPECT_NE(v.unavailable_reason.find("0 in the baseline"), std::string::npos);
  Report report;
  EXPECT_FALSE(SetGateFromVerdict(v, report));
}

TEST(Verdict, NotesRunsLeftOutAndDifferentIterationNames) {
  TraceFixture f;
  f.Kernel("gemm", 0, 100);
  const Trace flat = f.Build();
  RunSamples renamed = SamplesOf({.seed = 8});
  renamed.pattern = "ProfilerStep#N";
  const VerdictResult v = Verdict({SamplesOf({}), Samples(flat)}, {renamed}, 5.0);
  ASSERT_TRUE(v.available);
  EXPECT_EQ(v.runs_before, 1);
  ASSERT_EQ(v.notes.size(), 3u);
  EXPECT_NE(v.notes[0].find("1 run(s) of the baseline left out"), std::string::npos) << v.notes[0];
  EXPECT_NE(v.notes[1].find("step N, ProfilerStep#N"), std::string::npos) << v.notes[1];
  // One run on each side is left: the interval cannot hold the spread between runs.
  EXPECT_NE(v.notes[2].find("one run on a side"), std::string::npos) << v.notes[2];
}

TEST(Verdict, SeveralRunsPerSideNeedNoOneRunNote) {
  const VerdictResult v = Verdict({SamplesOf({}), SamplesOf({.seed = 2})},
                                  {SamplesOf({.seed = 3}), SamplesOf({.seed = 4})}, 5.0);
  ASSERT_TRUE(v.available);
  for (const std::string& n : v.notes)
    EXPECT_EQ(n.find("one run on a side"), std::string::npos) << n;
}

TEST(Verdict, SameInputsSameInterval) {
  const RunSamples b = SamplesOf({}), a = SamplesOf({.seed = 3});
  const VerdictResult x = Verdict({b}, {a}, 5.0), y = Verdict({b}, {a}, 5.0);
  EXPECT_EQ(x.median_change_pct.lo, y.median_change_pct.lo);
  EXPECT_EQ(x.median_change_pct.hi, y.median_change_pct.hi);
  EXPECT_EQ(x.sentence, y.sentence);
}

TEST(Verdict, SeveralRunsAddTheSpreadBetweenRuns) {
  // Each run of a side ran on a machine a few percent faster or slower than the others.
  const double factors[] = {0.96, 1.0, 1.04};
  std::vector<RunSamples> before, after;
  RunSamples pooled_before, pooled_after;  // the same iterations as if from one run
  for (int r = 0; r < 3; ++r) {
    LoopSpec b;
    b.iterations = 20;
    b.run_factor = factors[r];
    b.seed = 50 + r;
    LoopSpec a = b;
    a.run_factor = factors[2 - r];
    a.seed = 80 + r;
    before.push_back(SamplesOf(b));
    after.push_back(SamplesOf(a));
  }
  auto pool = [](const std::vector<RunSamples>& runs) {
    RunSamples all;
    for (const RunSamples& run : runs) {
      const size_t first = all.wall_ns.size();
      all.wall_ns.insert(all.wall_ns.end(), run.wall_ns.begin(), run.wall_ns.end());
      all.launched_ns.insert(all.launched_ns.end(), run.launched_ns.begin(), run.launched_ns.end());
      for (std::vector<double>& v : all.part_ns) v.resize(all.wall_ns.size(), 0.0);
      for (size_t p = 0; p < run.parts.size(); ++p) {
        const size_t q = all.PartIndex(run.parts[p]);
        all.part_ns[q].resize(all.wall_ns.size(), 0.0);
        std::copy(run.part_ns[p].begin(), run.part_ns[p].end(), all.part_ns[q].begin() + first);
      }
    }
    return all;
  };
  const VerdictResult runs = Verdict(before, after, 5.0);
  const VerdictResult one = Verdict({pool(before)}, {pool(after)}, 5.0);
  EXPECT_EQ(runs.runs_before, 3);
  EXPECT_EQ(runs.iterations_before, 60);
  EXPECT_EQ(one.runs_before, 1);
  const double width_runs = runs.median_change_pct.hi - runs.median_change_pct.lo;
  const double width_one = one.median_change_pct.hi - one.median_change_pct.lo;
  EXPECT_GT(width_runs, 1.5 * width_one);
  EXPECT_NE(runs.decision, VerdictDecision::kSlower);

  // A 10% slower GEMM in every candidate run is still found.
  std::vector<RunSamples> slower;
  for (int r = 0; r < 3; ++r) {
    LoopSpec a;
    a.iterations = 20;
    a.run_factor = factors[r];
    a.seed = 90 + r;
    a.mlp_ns *= 1.25;
    slower.push_back(SamplesOf(a));
  }
  const VerdictResult s = Verdict(before, slower, 5.0);
  EXPECT_EQ(s.decision, VerdictDecision::kSlower) << s.sentence;
  EXPECT_EQ(s.parts[0].label, "`mlp` " + GemmCategory());
}

// Unchanged pairs of 3 runs against 3, where each run's machine is a little faster or slower
// (1.5% between runs, 2% between iterations), as unchanged runs on the GPU machine were: a 95%
// interval may miss 0 in about 1 pair in 20. Resampling 3 runs alone missed it in 5 of these 40
// pairs (4 "slower" at T = 0; on an H200, 5 of 40 real pairs); with Student's t over the runs
// it misses in 1.
TEST(Verdict, UnchangedPairsOfSeveralRunsRarelyExcludeZero) {
  std::mt19937_64 rng(2026);
  std::normal_distribution<double> machine(1.0, 0.015);
  constexpr int kPairs = 40;
  int misses = 0, slower = 0;
  uint64_t seed = 1000;
  for (int k = 0; k < kPairs; ++k) {
    std::vector<RunSamples> before, after;
    for (std::vector<RunSamples>* side : {&before, &after}) {
      for (int r = 0; r < 3; ++r) {
        LoopSpec spec;
        spec.iterations = 20;
        spec.run_factor = machine(rng);
        spec.seed = ++seed;
        side->push_back(SamplesOf(spec));
      }
    }
    VerdictOptions o;
    o.threshold_pct = 0.0;
    o.resamples = 500;
    const VerdictResult v = ComputeVerdict(before, after, o);
    ASSERT_TRUE(v.between_runs);
    misses += v.median_change_pct.excludes_zero() ? 1 : 0;
    slower += v.decision == VerdictDecision::kSlower ? 1 : 0;
  }
  EXPECT_LE(misses, 3) << "of " << kPairs << " unchanged pairs";
  EXPECT_LE(slower, 2) << "of " << kPairs << " unchanged pairs";
}

TEST(Verdict, AppearedWorkIsMarked) {
  LoopSpec spec;
  const RunSamples b = SamplesOf(spec);
  // The candidate adds a memcpy to every step, inside the "mlp" range.
  TraceFixture f;
  TimeNs t = 10'000;
  for (int i = 0; i < 20; ++i) {
    f.Range("mlp", t, t + 9);
    f.Launch(kGemm, t + 1, t + 3, t + 10, t + 3010);
    f.Memcpy(MemOpKind::kHtoD, t + 3010, t + 3510, 1 << 20);
    f.Range("step " + std::to_string(i), t, t + 4000);
    t += 4000;
  }
  const Trace at = f.Build();
  const VerdictResult v = Verdict({b}, {Samples(at)}, std::nullopt);
  ASSERT_TRUE(v.available);
  EXPECT_EQ(v.decision, VerdictDecision::kNoGate);
  bool appeared = false;
  for (const VerdictPart& c : v.categories) appeared |= c.what == "memcpy HtoD" && c.appeared;
  EXPECT_TRUE(appeared);
}

// A host-bound loop (the GPU busy about a tenth of the step) with noisy host code: with one run
// per side its step time is host noise and not gated; the GPU time launched decides and comes
// first. Several runs per side measure the spread between runs, and the step time is gated.
TEST(Verdict, HostNoiseStepTimeIsNotGatedAndTheGpuTimeDecides) {
  const LoopSpec before = {
      .attn_ns = 500, .mlp_ns = 1500, .host_ns = 20000, .noise = 0.01, .host_noise = 0.3};
  LoopSpec after = before;
  after.seed = 2;
  after.mlp_ns *= 1.10;   // +7.5% GPU time
  after.host_ns *= 0.75;  // the host 25% faster: the step time goes down
  const VerdictResult v = Verdict({SamplesOf(before)}, {SamplesOf(after)}, 5.0);
  ASSERT_TRUE(v.available);
  EXPECT_FALSE(v.step_time_gated);
  EXPECT_LT(v.busy_share_before_pct, kHostBoundBusyPct);
  EXPECT_LT(v.busy_share_after_pct, kHostBoundBusyPct);
  EXPECT_GE(v.median_change_pct.hi - v.median_change_pct.lo,
            kHostNoiseWidthRatio * (v.launched_change_pct.hi - v.launched_change_pct.lo));
  EXPECT_LT(v.median_change_pct.value, 0);
  EXPECT_EQ(v.decision, VerdictDecision::kSlower) << v.sentence;
  EXPECT_EQ(v.decided_by, "GPU time launched");
  EXPECT_EQ(v.sentence.rfind("Slower: GPU time launched +", 0), 0u) << v.sentence;
  EXPECT_NE(v.sentence.find("(host noise here: not gated)"), std::string::npos) << v.sentence;
  EXPECT_EQ(v.decided_by_detail.rfind("median GPU time launched per step +", 0), 0u)
      << v.decided_by_detail;
  EXPECT_NE(v.decided_by_detail.find("above the threshold +5.0%"), std::string::npos);
  EXPECT_NE(v.decision_reason.find("the step time is host noise here: one run on a side"),
            std::string::npos)
      << v.decision_reason;

  // The host 25% slower and the GPU unchanged: the step time is not what one run can tell.
  LoopSpec slower_host = before;
  slower_host.seed = 3;
  slower_host.host_ns *= 1.25;
  const VerdictResult h = Verdict({SamplesOf(before)}, {SamplesOf(slower_host)}, 5.0);
  EXPECT_FALSE(h.step_time_gated);
  EXPECT_EQ(h.decision, VerdictDecision::kNotSlower) << h.sentence;
  EXPECT_EQ(h.sentence.rfind("Not slower: GPU time launched ", 0), 0u) << h.sentence;

  // Three runs per side: the step time is gated, and it is the host's slowdown that decides.
  std::vector<RunSamples> b3, a3;
  for (uint64_t k = 0; k < 3; ++k) {
    LoopSpec x = before, y = slower_host;
    x.seed = 10 + k;
    y.seed = 20 + k;
    b3.push_back(SamplesOf(x));
    a3.push_back(SamplesOf(y));
  }
  const VerdictResult g = Verdict(b3, a3, 5.0);
  EXPECT_TRUE(g.step_time_gated);
  EXPECT_NE(g.decided_by.find("step time"), std::string::npos) << g.sentence;
}

// The runs' loops: `step N` (the main set) and a `graph_step N` loop with its own figures.
std::vector<RunSamples> TwoLoops(const LoopSpec& main, const LoopSpec& graph) {
  RunSamples m = SamplesOf(main), g = SamplesOf(graph);
  g.pattern = "graph_step_N";
  return {m, g};
}

TEST(LoopVerdicts, EachLoopOnItsOwnAndTheSlowerLeads) {
  LoopSpec graph = {.iterations = 30, .attn_ns = 800, .mlp_ns = 2000, .host_ns = 50};
  LoopSpec slower_graph = graph;
  slower_graph.mlp_ns *= 1.2;
  slower_graph.seed = 9;
  const std::vector<std::vector<RunSamples>> before = {TwoLoops({}, graph)};
  const std::vector<std::vector<RunSamples>> after = {TwoLoops({.seed = 2}, slower_graph)};
  VerdictOptions o;
  o.threshold_pct = 5.0;
  const LoopVerdicts lv = ComputeLoopVerdicts(before, after, o);
  ASSERT_EQ(lv.loops.size(), 2u);
  EXPECT_EQ(lv.loops[0].loop, "step N");
  EXPECT_EQ(lv.loops[1].loop, "graph_step_N");
  EXPECT_EQ(lv.loops[0].decision, VerdictDecision::kNotSlower);
  EXPECT_EQ(lv.loops[1].decision, VerdictDecision::kSlower);
  EXPECT_EQ(lv.decision, VerdictDecision::kSlower);
  EXPECT_EQ(lv.lead, 1u);
  EXPECT_NE(lv.lead_why.find("where the main loop `step N` is not slower"), std::string::npos);
  EXPECT_EQ(lv.sentence.rfind("Slower: step time +", 0), 0u) << lv.sentence;
  EXPECT_NE(lv.sentence.find("in `graph_step_N` (median;"), std::string::npos) << lv.sentence;
  EXPECT_NE(lv.sentence.find("Other loop: `step N` not slower"), std::string::npos);
  EXPECT_NE(DecidedBy(lv).find(", in `graph_step_N`"), std::string::npos) << DecidedBy(lv);

  Report report;
  AddVerdictSection(lv, 15, report);
  ASSERT_TRUE(SetGateFromVerdict(lv, report));
  EXPECT_TRUE(report.gate.failed);
  const Section& s = report.sections[0];
  const Table* loops = nullptr;
  for (const Table& t : s.tables) {
    if (t.key == "loops") loops = &t;
  }
  ASSERT_NE(loops, nullptr);
  EXPECT_EQ(loops->rows.size(), 2u);

  // Unchanged: not slower, and the main loop leads.
  const LoopVerdicts same = ComputeLoopVerdicts(
      before,
      {TwoLoops({.seed = 3},
                {.iterations = 30, .attn_ns = 800, .mlp_ns = 2000, .host_ns = 50, .seed = 4})},
      o);
  EXPECT_EQ(same.decision, VerdictDecision::kNotSlower) << same.sentence;
  EXPECT_EQ(same.lead, 0u);
}

TEST(LoopVerdicts, LoopsOnOneSideOrWithTooFewStepsAreNotCompared) {
  VerdictOptions o;
  o.threshold_pct = 5.0;
  // A saved baseline keeps the main loop only: the candidate's graph loop has no partner.
  const LoopVerdicts one_sided =
      ComputeLoopVerdicts({{SamplesOf({})}}, {TwoLoops({.seed = 2}, {.seed = 3})}, o);
  ASSERT_EQ(one_sided.loops.size(), 1u);
  ASSERT_EQ(one_sided.notes.size(), 1u);
  EXPECT_NE(one_sided.notes[0].find("loop `graph_step_N` only in the candidate (40 steps)"),
            std::string::npos)
      << one_sided.notes[0];
  EXPECT_EQ(one_sided.sentence, one_sided.loops[0].sentence);  // no loop named
  EXPECT_EQ(one_sided.sentence.find("`step N`"), std::string::npos);
  const LoopVerdicts few = ComputeLoopVerdicts({TwoLoops({}, {.iterations = 3})},
                                               {TwoLoops({.seed = 2}, {.iterations = 3})}, o);
  ASSERT_EQ(few.loops.size(), 1u);
  ASSERT_EQ(few.notes.size(), 1u);
  EXPECT_NE(few.notes[0].find("3 and 3 steps, fewer than 5 on a side"), std::string::npos)
      << few.notes[0];
}

TEST(BaselineFile, RoundTripKeepsEveryFigure) {
  SavedBaseline saved;
  saved.tool_version = "test";
  saved.iterations_regex = "step \\d+";
  saved.runs.push_back(SamplesOf({.iterations = 8}));
  saved.runs.push_back(SamplesOf({.iterations = 6, .seed = 9}));
  const std::string text = SerializeBaseline(saved);
  EXPECT_TRUE(LooksLikeBaseline(text));
  StatusOr<SavedBaseline> back = ParseBaseline(text, "b.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->iterations_regex, saved.iterations_regex);
  ASSERT_EQ(back->runs.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const RunSamples &x = saved.runs[r], &y = back->runs[r];
    EXPECT_EQ(y.pattern, x.pattern);
    ASSERT_EQ(y.wall_ns, x.wall_ns);  // whole ns: exact
    ASSERT_EQ(y.launched_ns, x.launched_ns);
    ASSERT_EQ(y.parts.size(), x.parts.size());
    for (size_t p = 0; p < x.parts.size(); ++p) {
      EXPECT_EQ(y.parts[p].Key(), x.parts[p].Key());
      for (size_t i = 0; i < x.iterations(); ++i) {
        EXPECT_NEAR(y.part_ns[p][i], x.part_ns[p][i], 0.001);
      }
    }
  }
  // The verdict against the saved baseline is the verdict against the runs themselves.
  const RunSamples after = SamplesOf({.seed = 4});
  EXPECT_NEAR(Verdict(back->runs, {after}, 5.0).median_change_pct.lo,
              Verdict(saved.runs, {after}, 5.0).median_change_pct.lo, 1e-9);
}

TEST(BaselineFile, BadFilesAreRefusedWithWhereAndWhat) {
  const std::string good = SerializeBaseline({"t", "", {SamplesOf({.iterations = 5})}});
  struct Case {
    std::string text, expect;
  };
  std::string newer = good;
  newer.replace(newer.find("\"format_version\": 1"), 19, "\"format_version\": 99");
  std::string negative = good;
  negative.replace(negative.find("\"wall_ns\": ["), 12, "\"wall_ns\": [-5, ");
  std::string unbalanced = good;
  const size_t ns = unbalanced.find("\"ns\": [") + 7;
  unbalanced.replace(ns, 0, "100000, ");
  const Case cases[] = {
      {"not json", "not valid JSON"},
      {"{\"format\": \"other\"}", "\"format\""},
      {newer, "newer"},
      {negative, "wall_ns[0]"},
      {unbalanced, "values for"},
  };
  for (const Case& c : cases) {
    StatusOr<SavedBaseline> r = ParseBaseline(c.text, "x.json");
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_NE(r.status().message().find("x.json"), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().ToString();
  }
}

TEST(VerdictReport, SectionOpensWithTheSentenceAndNoNonFiniteNumbers) {
  const VerdictResult v = Verdict({SamplesOf({})}, {SamplesOf({.mlp_ns = 3300, .seed = 5})}, 5.0);
  Report report;
  AddVerdictSection(v, 15, report);
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  EXPECT_EQ(s.key, "diff_verdict");
  ASSERT_FALSE(s.facts.empty());
  EXPECT_EQ(s.facts[0].key, "summary");
  EXPECT_EQ(std::get<std::string>(s.facts[0].value), v.sentence);
  for (const Table& t : s.tables) {
    for (const auto& row : t.rows) {
      for (const Value& cell : row) {
        if (const double* d = std::get_if<double>(&cell)) {
          EXPECT_TRUE(std::isfinite(*d)) << t.key;
        }
      }
    }
  }
  const std::string json = RenderJsonReport(report);
  EXPECT_NE(json.find("\"decision\": \"slower\""), std::string::npos);
  EXPECT_EQ(json.find("nan"), std::string::npos);
  EXPECT_EQ(json.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace sightline
