// Tests for the trace diff (diff/trace_diff.h) and kernel name normalization
// (diff/name_normalize.h): matching, appeared/vanished kernels, the per-iteration basis, the
// --fail-if-slower gate, and cross-format matching on the shipped samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "diff/diff_report.h"
#include "diff/name_normalize.h"
#include "diff/trace_diff.h"
#include "importers/importer.h"
#include "reporters/reporter.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::TraceFixture;

// A kernel name and how long each of its `calls` runs.
struct K {
  const char* name;
  DurationNs dur_ns;
  int calls = 1;
};

// Kernels back to back on one stream; with `iterations` > 0, the kernel list repeats once per
// iteration, each inside a "step N" range that launches it.
Trace Build(const std::vector<K>& kernels, int iterations = 0) {
  TraceFixture f;
  TimeNs t = 1000;
  const int reps = std::max(iterations, 1);
  for (int it = 0; it < reps; ++it) {
    const TimeNs it_start = t;
    for (const K& k : kernels) {
      for (int c = 0; c < k.calls; ++c) {
        if (iterations > 0) {
          f.Launch(k.name, t, t + 1, t + 2, t + 2 + k.dur_ns);
        } else {
          f.Kernel(k.name, t + 2, t + 2 + k.dur_ns);
        }
        t += k.dur_ns + 10;
      }
    }
    if (iterations > 0) f.Range("step " + std::to_string(it), it_start, t + 5);
    t += 10;
  }
  return f.Build();
}

TraceDiffResult Diff(const Trace& b, const Trace& a, std::optional<double> gate = std::nullopt,
                     double min_share = 1.0) {
  TraceDiffOptions options;
  options.fail_if_slower_pct = gate;
  options.min_share_pct = min_share;
  return testing::ValueOrDie(ComputeTraceDiff(*Ctx(b), *Ctx(a), options));
}

const DiffItem* FindKernel(const std::vector<DiffItem>& items, std::string_view name) {
  for (const DiffItem& i : items) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

bool Failed(const GateResult& g, std::string_view what) {
  return std::any_of(g.failures.begin(), g.failures.end(),
                     [&](const GateFailure& f) { return f.what == what; });
}

TEST(DiffNames, NsysAndKinetoSpellingsMatch) {
  // Pairs taken from examples/samples/llama_decode_h100.{nsys.sqlite,pytorch.json.gz}.
  const std::pair<const char*, const char*> pairs[] = {
      {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<bool>, "
       "std::array<char *, (unsigned long)1>>(int, T2, T3)",
       "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, "
       "std::array<char*, 1ul> >(int, at::native::FillFunctor<bool>, std::array<char*, 1ul>)"},
      {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::"
       "bfloat16_t, cutlass::arch::Sm80, (bool)1, (int)64, (int)64, (int)64, (bool)1, "
       "(bool)1>::Params)",
       "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::"
       "bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"},
      {"void "
       "at::native::<unnamed>::CatArrayBatchedCopy<at::native::<unnamed>::OpaqueType<(unsigned "
       "int)2>, unsigned int, (int)4, (int)64, (int)64>(T1 *, at::native::<unnamed>::"
       "CatArrInputTensorMetadata<T1, T2, T4, T5>, int, T2)",
       "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
       "namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::"
       "OpaqueType<2u>*, int, unsigned int)"},
      {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::rsqrt_kernel_cuda(at::"
       "TensorIteratorBase &)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance "
       "2)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, (unsigned "
       "long)2>>(int, T2, T3)",
       "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::"
       "TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
       "const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::rsqrt_kernel_cuda(at::"
       "TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
       "const::{lambda(float)#1}, std::array<char*, 2ul>)"},
      {"void gemmk1_kernel<int, float, (int)256, (int)5, (bool)1, "
       "cublasGemvTensorStridedBatched<const float>>(cublasGemmk1Params<T2, T9>)",
       "void gemmk1_kernel<int, float, 256, 5, true, cublasGemvTensorStridedBatched<float "
       "const> >(cublasGemmk1Params<float, float>)"},
      {"void at::native::index_elementwise_kernel<(int)128, (int)4, (int)-2>(long, T3)",
       "void at::native::index_elementwise_kernel<128, 4, -2>(long, int)"},
  };
  for (const auto& [nsys, kineto] : pairs) {
    EXPECT_EQ(NormalizeKernelName(nsys), NormalizeKernelName(kineto)) << nsys;
  }
  EXPECT_EQ(NormalizeKernelName(pairs[0].first),
            "at::native::vectorized_elementwise_kernel<4,at::native::FillFunctor<bool>,std::array<"
            "char*,1>>");
  EXPECT_EQ(NormalizeKernelName(pairs[3].second),
            "at::native::vectorized_elementwise_kernel<4,at::native::rsqrt_kernel_cuda::{lambda#2}"
            "::operator()::{lambda#2}::operator()::{lambda#1},std::array<char*,2>>");
  EXPECT_EQ(NormalizeKernelName("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"),
            "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT");
}

TEST(DiffNames, InstantiationsStayApart) {
  EXPECT_NE(NormalizeKernelName("void k<(int)4, float>(T2)"),
            NormalizeKernelName("void k<(int)8, float>(T2)"));
  EXPECT_NE(NormalizeKernelName("void k<float>(float)"), NormalizeKernelName("void k<half>(half)"));
  EXPECT_EQ(KernelBaseKey(NormalizeKernelName("void ns::k<(int)4, x<y>>(T2)")), "ns::k");
}

TEST(Diff, KernelThatGrewThirtyPercentFailsTenPassesFifty) {
  const Trace before = Build({{"gemm", 1000, 10}, {"norm", 500, 10}, {"tiny", 5, 1}});
  const Trace after = Build({{"gemm", 1300, 10}, {"norm", 500, 10}, {"tiny", 50, 1}});
  const TraceDiffResult r10 = Diff(before, after, 10.0);
  EXPECT_EQ(r10.basis, DiffBasis::kTotal);
  ASSERT_FALSE(r10.kernels.empty());
  EXPECT_EQ(r10.kernels[0].name, "gemm");  // largest regression first
  EXPECT_NEAR(r10.kernels[0].delta_pct(), 30.0, 1e-9);
  EXPECT_NEAR(r10.kernels[0].ratio(), 1.3, 1e-9);
  EXPECT_EQ(r10.kernels[0].count_before, 10);
  EXPECT_TRUE(r10.gate.failed);
  EXPECT_TRUE(Failed(r10.gate, "gemm"));
  EXPECT_TRUE(Failed(r10.gate, "GPU time"));  // 15,005 -> 18,050 ns: +20.3%
  EXPECT_FALSE(Failed(r10.gate, "norm"));
  EXPECT_FALSE(Failed(r10.gate, "tiny"));  // 10x, but 0.03% of the baseline
  EXPECT_EQ(r10.gate.gated_kernels, 2);

  const TraceDiffResult r50 = Diff(before, after, 50.0);
  EXPECT_FALSE(r50.gate.failed);
  EXPECT_TRUE(r50.gate.failures.empty());

  const TraceDiffResult no_gate = Diff(before, after);
  EXPECT_FALSE(no_gate.gate.enabled);
  EXPECT_FALSE(no_gate.gate.failed);
}

TEST(Diff, SmallKernelGrowingTenfoldDoesNotTripTheGate) {
  const Trace before = Build({{"gemm", 10000, 1}, {"small", 50, 1}});  // small: 0.5%
  const Trace after = Build({{"gemm", 10000, 1}, {"small", 500, 1}});
  const TraceDiffResult r = Diff(before, after, 10.0);  // total +4.5%
  EXPECT_FALSE(r.gate.failed);
  const DiffItem* small = FindKernel(r.kernels, "small");
  ASSERT_NE(small, nullptr);
  EXPECT_NEAR(small->ratio(), 10.0, 1e-9);
  EXPECT_LT(small->share_before_pct, 1.0);
  EXPECT_EQ(r.kernels[0].name, "small");  // still listed first: the largest regression

  // A tighter gate trips on the total only; --min-share 0.1 gates the small kernel too.
  const TraceDiffResult tight = Diff(before, after, 1.0);
  ASSERT_EQ(tight.gate.failures.size(), 1u);
  EXPECT_EQ(tight.gate.failures[0].what, "GPU time");
  EXPECT_TRUE(Failed(Diff(before, after, 10.0, 0.1).gate, "small"));
}

TEST(Diff, AppearedAndVanishedKernels) {
  const Trace before = Build({{"gemm", 1000, 2}, {"old_norm", 300, 2}});
  const Trace after = Build({{"gemm", 1000, 2}, {"fused_norm", 200, 2}, {"extra", 50, 1}});
  const TraceDiffResult r = Diff(before, after, 10.0);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].name, "gemm");
  ASSERT_EQ(r.vanished.size(), 1u);
  EXPECT_EQ(r.vanished[0].name, "old_norm");
  EXPECT_EQ(r.vanished[0].total_before_ns, 600);
  ASSERT_EQ(r.appeared.size(), 2u);
  EXPECT_EQ(r.appeared[0].name, "fused_norm");  // largest first
  EXPECT_EQ(r.appeared[1].name, "extra");
  EXPECT_EQ(r.appeared[0].count_after, 2);
  EXPECT_NEAR(r.matched_share_before_pct, 100.0 * 2000 / 2600, 1e-9);
  EXPECT_NEAR(r.matched_share_after_pct, 100.0 * 2000 / 2450, 1e-9);
  EXPECT_FALSE(r.gate.failed);  // 2,600 -> 2,450 ns
}

TEST(Diff, TemplateChangeMatchesByBaseNameWhenUnambiguous) {
  const Trace before = Build({{"void lib::gemm<(int)128>(T1)", 1000, 1},
                              {"void a<int>(int)", 10},
                              {"void a<long>(long)", 10}});
  const Trace after = Build({{"void lib::gemm<(int)256>(T1)", 900, 1},
                             {"void a<short>(short)", 10},
                             {"void a<char>(char)", 10}});
  const TraceDiffResult r = Diff(before, after);
  ASSERT_EQ(r.loose_matches, 1);
  const auto it = std::find_if(r.kernels.begin(), r.kernels.end(),
                               [](const DiffItem& k) { return k.loose_match; });
  ASSERT_NE(it, r.kernels.end());
  EXPECT_EQ(it->key, "lib::gemm");
  EXPECT_EQ(it->total_before_ns, 1000);
  EXPECT_EQ(it->total_after_ns, 900);
  // Two candidates share the base name "a" on each side: no guessing.
  EXPECT_EQ(r.vanished.size(), 2u);
  EXPECT_EQ(r.appeared.size(), 2u);
}

TEST(Diff, DifferentIterationCountsComparePerIteration) {
  // The candidate ran twice as many steps of the same work: per iteration nothing changed.
  const Trace before = Build({{"gemm", 1000, 1}, {"norm", 100, 1}}, 2);
  const Trace after = Build({{"gemm", 1000, 1}, {"norm", 100, 1}}, 4);
  const TraceDiffResult r = Diff(before, after, 10.0);
  EXPECT_EQ(r.basis, DiffBasis::kPerIteration);
  EXPECT_EQ(r.iterations_before, 2);
  EXPECT_EQ(r.iterations_after, 4);
  EXPECT_EQ(r.gpu_time.total_before_ns, 2200);
  EXPECT_EQ(r.gpu_time.total_after_ns, 4400);
  EXPECT_DOUBLE_EQ(r.gpu_time.before_ns, 1100);
  EXPECT_DOUBLE_EQ(r.gpu_time.after_ns, 1100);
  EXPECT_FALSE(r.gate.failed);
  ASSERT_TRUE(r.iterations.has_value());
  EXPECT_EQ(r.iterations->by_index.size(), 2u);
  EXPECT_EQ(r.iterations->pattern_before, "step N");

  // A slower gemm per step fails the gate.
  const Trace slower = Build({{"gemm", 1500, 1}, {"norm", 100, 1}}, 2);
  const TraceDiffResult s = Diff(before, slower, 10.0);
  EXPECT_EQ(s.basis, DiffBasis::kPerIteration);
  EXPECT_DOUBLE_EQ(s.gpu_time.after_ns, 1600);
  EXPECT_TRUE(Failed(s.gate, "gemm"));
  EXPECT_NEAR(s.gate.failures[0].growth_pct, 100.0 * 500 / 1100, 1e-9);  // GPU time first
  ASSERT_TRUE(s.iterations.has_value());
  EXPECT_GT(s.iterations->by_index[0].delta_ns(), 0);
  // The "step N" ranges launched the work: the range table sees the growth.
  ASSERT_FALSE(s.ranges.empty());
  EXPECT_EQ(s.ranges[0].name, "step N");
  EXPECT_EQ(s.ranges[0].total_before_ns, 2200);
  EXPECT_EQ(s.ranges[0].total_after_ns, 3200);
}

TEST(Diff, CategoriesIncludeMemoryOperations) {
  TraceFixture fb, fa;
  fb.Kernel("gemm_kernel", 0, 1000).Memcpy(MemOpKind::kHtoD, 1000, 1200, 1 << 20);
  fa.Kernel("gemm_kernel", 0, 1000).Memcpy(MemOpKind::kHtoD, 1000, 1600, 1 << 20);
  const Trace b = fb.Build(), a = fa.Build();
  const TraceDiffResult r = Diff(b, a, 10.0);
  ASSERT_FALSE(r.categories.empty());
  EXPECT_EQ(r.categories[0].name, "memcpy HtoD");
  EXPECT_EQ(r.categories[0].delta_ns(), 400);
  EXPECT_EQ(r.memop_time.total_after_ns, 600);
  EXPECT_TRUE(Failed(r.gate, "GPU time"));  // 1,200 -> 1,600 ns
}

TEST(Diff, TraceWithoutGpuWorkIsAnError) {
  const Trace with = Build({{"gemm", 1000, 1}});
  TraceFixture f;
  f.Range("step 0", 0, 10);
  const Trace without = f.Build();
  StatusOr<TraceDiffResult> r = ComputeTraceDiff(*Ctx(with), *Ctx(without), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("candidate"), std::string::npos);
  EXPECT_NE(r.status().message().find("no GPU kernels"), std::string::npos);
}

TEST(Diff, ReportHasTheSectionsAndFitsTheTerminal) {
  const Trace before = Build({{"gemm", 1000, 10}, {"norm", 500, 10}}, 2);
  const Trace after = Build({{"gemm", 1300, 10}, {"fused", 400, 10}}, 2);
  const TraceDiffResult r = Diff(before, after, 10.0);
  Report report;
  report.inputs.resize(2);  // baseline, candidate (the pipeline fills them from the traces)
  AddDiffSections(r, 15, report);
  std::vector<std::string> keys;
  for (const Section& s : report.sections) keys.push_back(s.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"diff_summary", "diff_gate", "diff_kernels",
                                            "diff_categories", "diff_ranges", "diff_iterations"}));
  const std::string text = RenderTextReport(report);
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    // Column content may hold multi-byte "—"; count code points.
    size_t width = 0;
    for (size_t i = start; i < end; ++i) width += (text[i] & 0xC0) != 0x80;
    EXPECT_LE(width, 120u) << text.substr(start, end - start);
    start = end + 1;
  }
}

// The two shipped samples record the same program with nsys and with the PyTorch profiler.
TEST(DiffSamples, NsysAgainstPyTorchMatchesMostKernelTime) {
  const std::string dir = std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/";
  StatusOr<Trace> nsys = ImportTrace(dir + "llama_decode_h100.nsys.sqlite");
  StatusOr<Trace> kineto = ImportTrace(dir + "llama_decode_h100.pytorch.json.gz");
  ASSERT_TRUE(nsys.ok()) << nsys.status().ToString();
  ASSERT_TRUE(kineto.ok()) << kineto.status().ToString();
  const TraceDiffResult r = Diff(*nsys, *kineto);
  // Measured: both have the 33 "iteration_N" ranges; nsys also captured the warm-up (87.9% of its
  // GPU time is inside the iterations), so the comparison is per iteration. Inside them the same
  // 55 kernels run, with the same call counts, and match exactly by name.
  EXPECT_EQ(r.basis, DiffBasis::kPerIteration);
  EXPECT_EQ(r.iterations_before, 33);
  EXPECT_EQ(r.iterations_after, 33);
  EXPECT_EQ(r.loose_matches, 0);
  EXPECT_EQ(r.appeared.size(), 0u);
  EXPECT_EQ(r.vanished.size(), 0u);
  EXPECT_EQ(r.kernels.size(), 55u);
  EXPECT_DOUBLE_EQ(r.matched_share_before_pct, 100.0);
  EXPECT_DOUBLE_EQ(r.matched_share_after_pct, 100.0);
  for (const DiffItem& k : r.kernels) EXPECT_EQ(k.count_before, k.count_after) << k.name;
  // The two tools time the same GPU work within 0.2% (measured +0.11%).
  EXPECT_LT(std::abs(r.gpu_time.delta_pct()), 0.2);
  EXPECT_NE(FindKernel(r.kernels, "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"), nullptr);

  // Over the whole traces every one of the 57 PyTorch kernel names matches an nsys name; nsys has
  // 7 more (random initialisation before the profiled window).
  const std::string empty_name_regex = "no iteration has this name";
  AnalyzeOptions totals;
  totals.iterations_regex = empty_name_regex;
  StatusOr<TraceDiffResult> whole =
      ComputeTraceDiff(*Ctx(*nsys, totals), *Ctx(*kineto, totals), TraceDiffOptions{});
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->basis, DiffBasis::kTotal);
  EXPECT_EQ(whole->kernels.size(), 57u);
  EXPECT_EQ(whole->appeared.size(), 0u);
  EXPECT_EQ(whole->vanished.size(), 7u);
  EXPECT_DOUBLE_EQ(whole->matched_share_after_pct, 100.0);
  EXPECT_GT(whole->matched_share_before_pct, 97.0);  // measured 97.5%
}

}  // namespace
}  // namespace sightline
