// What the tests of the diff's verdict share (step_samples_test.cc, verdict_test.cc,
// loop_verdicts_test.cc): a decode-like loop built with planted durations and noise (BuildLoop),
// and its per-iteration samples.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "diff/baseline_file.h"
#include "diff/diff_report.h"
#include "diff/loop_verdicts.h"
#include "diff/step_samples.h"
#include "diff/verdict.h"
#include "diff/verdict_report.h"
#include "facts/kernel_category.h"
#include "reporters/reporter.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline::verdict_test {

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

inline Trace BuildLoop(const LoopSpec& spec) {
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

inline RunSamples Samples(const Trace& trace) {
  return testing::ValueOrDie(CollectRunSamples(*Ctx(trace)));
}

inline RunSamples SamplesOf(const LoopSpec& spec) { return Samples(BuildLoop(spec)); }

inline VerdictResult Verdict(const std::vector<RunSamples>& b, const std::vector<RunSamples>& a,
                             std::optional<double> threshold) {
  VerdictOptions o;
  o.threshold_pct = threshold;
  return ComputeVerdict(b, a, o);
}

inline std::string GemmCategory() { return KernelCategoryName(ClassifyKernel(kGemm)); }

}  // namespace sightline::verdict_test
