// Tests for the findings engine (analyses/findings/findings.h): each rule on a synthetic trace
// where it must fire and one where it must stay quiet, plus ranking and the pipeline hook.
#include "analyses/findings/findings.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline/pipeline.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::TraceFixture;

std::vector<Finding> RunRules(const Trace& t) {
  return testing::ValueOrDie(ComputeFindings(*Ctx(t, AnalyzeOptions{})));
}

const Finding* Find(const std::vector<Finding>& v, std::string_view id) {
  for (const Finding& f : v) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

int64_t IntFact(const Finding& f, std::string_view key) {
  for (const Fact& e : f.evidence) {
    if (e.key == key) return std::get<int64_t>(e.value);
  }
  ADD_FAILURE() << "no evidence " << key;
  return -1;
}

// `iters` iterations of 100 us ("iteration N"), each launching `kernels` kernels: launch calls of
// 2.5 us every `period` ns, each kernel `kernel_ns` long and starting when its launch call ends
// (or when the previous kernel ends, whichever is later).
Trace LoopTrace(int iters, int kernels, TimeNs period, DurationNs kernel_ns) {
  TraceFixture f;
  f.Device(0);
  for (int i = 0; i < iters; ++i) {
    const TimeNs t0 = 1'000'000 + i * 100'000;
    f.Range("iteration " + std::to_string(i), t0, t0 + 100'000);
    TimeNs gpu_free = t0;
    for (int k = 0; k < kernels; ++k) {
      const TimeNs a = t0 + 1'000 + k * period;
      const TimeNs start = std::max(a + 2'500, gpu_free);
      f.Launch("small_kernel_" + std::to_string(k % 4), a, a + 2'500, start, start + kernel_ns);
      gpu_free = start + kernel_ns;
    }
  }
  return f.Build();
}

TEST(Findings, LaunchBoundFires) {
  // 30 kernels of 1 us every 3 us: 2 us gaps, 1 us of each a graph would keep.
  const Trace t = LoopTrace(10, 30, 3'000, 1'000);
  const std::vector<Finding> v = RunRules(t);
  const Finding* f = Find(v, "launch_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->estimated_savings_ns, 10 * 29 * 1'000);
  EXPECT_EQ(IntFact(*f, "kernels"), 300);
  EXPECT_EQ(IntFact(*f, "launch_bound_windows"), 10);
  EXPECT_NE(f->where.find("iterations 0..9"), std::string::npos) << f->where;
  EXPECT_NE(f->recommendation.find("CUDA graph"), std::string::npos);
}

TEST(Findings, LaunchBoundQuietWhenGpuBound) {
  // Same launch rate, but each kernel runs 3.5 us: the queue never drains, the GPU is busy.
  const Trace t = LoopTrace(10, 25, 3'000, 3'500);
  EXPECT_EQ(Find(RunRules(t), "launch_bound"), nullptr);
  // Few kernels per iteration: launch cost cannot dominate.
  const Trace few = LoopTrace(10, 5, 3'000, 1'000);
  EXPECT_EQ(Find(RunRules(few), "launch_bound"), nullptr);
}

// Iterations of 100 us: a kernel, then the loop's blocking call, then a kernel launched after it.
Trace SyncTrace(bool sync_inside, std::string_view api, MemoryKind host_kind) {
  TraceFixture f;
  f.Device(0);
  for (int i = 0; i < 5; ++i) {
    const TimeNs t0 = 1'000'000 + i * 100'000;
    f.Range("decode_step " + std::to_string(i), t0, t0 + 100'000);
    f.Launch("gemm", t0 + 1'000, t0 + 3'000, t0 + 3'000, t0 + 40'000);
    const TimeNs s0 = sync_inside ? t0 + 4'000 : 2'000'000 + i * 50'000;
    const int64_t corr = 500 + i;
    f.Api(api, s0, s0 + 37'000, ApiKind::kRuntime, {}, api.find("Memcpy") != api.npos ? corr : -1);
    if (api.find("Memcpy") != api.npos) {
      MemOpRow m;
      m.start_ns = s0 + 36'000;
      m.end_ns = s0 + 37'000;
      m.pid = 100;
      m.kind = MemOpKind::kDtoH;
      m.src_kind = MemoryKind::kDevice;
      m.dst_kind = host_kind;
      m.size_bytes = 4;
      m.correlation = corr;
      f.builder().AddMemOp(m);
    }
    // The host launches the next kernel 10 us after the blocking call returns.
    f.Launch("norm", s0 + 47'000, s0 + 49'000, s0 + 49'000, s0 + 50'000);
  }
  return f.Build();
}

TEST(Findings, SyncInLoopFires) {
  const Trace t = SyncTrace(true, "cudaStreamSynchronize", MemoryKind::kUnknown);
  const std::vector<Finding> v = RunRules(t);
  const Finding* f = Find(v, "sync_in_loop");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(IntFact(*f, "calls"), 5);
  EXPECT_EQ(IntFact(*f, "iterations_with_calls"), 5);
  // The GPU idles 12 us after each sync returns, until the next launch reaches it.
  EXPECT_EQ(f->estimated_savings_ns, 5 * 12'000);
  EXPECT_NE(f->where.find("cudaStreamSynchronize"), std::string::npos) << f->where;
  EXPECT_EQ(Find(v, "blocking_copy"), nullptr);
}

TEST(Findings, SyncOutsideLoopQuiet) {
  const Trace t = SyncTrace(false, "cudaStreamSynchronize", MemoryKind::kUnknown);
  EXPECT_EQ(Find(RunRules(t), "sync_in_loop"), nullptr);
}

TEST(Findings, BlockingAndPageableCopies) {
  const Trace blocking = SyncTrace(true, "cudaMemcpy", MemoryKind::kPinned);
  const std::vector<Finding> v = RunRules(blocking);
  ASSERT_NE(Find(v, "blocking_copy"), nullptr);
  EXPECT_EQ(Find(v, "pageable_async_copy"), nullptr);

  const Trace pageable = SyncTrace(true, "cudaMemcpyAsync", MemoryKind::kPageable);
  const std::vector<Finding> w = RunRules(pageable);
  const Finding* f = Find(w, "pageable_async_copy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(IntFact(*f, "pageable_bytes"), 5 * 4);
  EXPECT_EQ(Find(w, "blocking_copy"), nullptr);

  // An async copy into pinned memory is what the advice asks for: quiet.
  const Trace pinned = SyncTrace(true, "cudaMemcpyAsync", MemoryKind::kPinned);
  const std::vector<Finding> x = RunRules(pinned);
  EXPECT_EQ(Find(x, "pageable_async_copy"), nullptr);
  EXPECT_EQ(Find(x, "blocking_copy"), nullptr);
}

// 10 iterations of 100 us with one 50 us kernel; iteration `slow` (if >= 0) also runs a 200 us
// kernel and lasts 300 us.
Trace OutlierTrace(int slow) {
  TraceFixture f;
  f.Device(0);
  TimeNs t0 = 1'000'000;
  for (int i = 0; i < 10; ++i) {
    const DurationNs wall = i == slow ? 300'000 : 100'000;
    f.Range("ProfilerStep#" + std::to_string(i), t0, t0 + wall, RangeKind::kUserAnnotation);
    f.Launch("gemm", t0 + 1'000, t0 + 3'000, t0 + 3'000, t0 + 53'000);
    if (i == slow) f.Launch("big_attention", t0 + 4'000, t0 + 6'000, t0 + 60'000, t0 + 260'000);
    t0 += wall;
  }
  return f.Build();
}

// Ten 100 us steps; steps 3 and 7 take 400 us, 250 us of it in a "Python GC" range (a start/end
// range on another thread of the process, as TensorRT-LLM's TLLM_PROFILE_RECORD_GC writes it).
Trace GcOutlierTrace(const char* gc_name = "Python GC") {
  TraceFixture f;
  f.Device(0);
  TimeNs t0 = 1'000'000;
  for (int i = 0; i < 10; ++i) {
    const bool gc = i == 3 || i == 7;
    const DurationNs wall = gc ? 400'000 : 100'000;
    f.Range("ProfilerStep#" + std::to_string(i), t0, t0 + wall, RangeKind::kUserAnnotation);
    f.Launch("gemm", t0 + 1'000, t0 + 3'000, t0 + 3'000, t0 + 53'000);
    if (gc) {
      f.Range(gc_name, t0 + 60'000, t0 + 310'000, RangeKind::kNvtxStartEnd,
              testing::HostThread{100, 555});
    }
    t0 += wall;
  }
  return f.Build();
}

TEST(Findings, OutlierIterationsNameGarbageCollectionWithItsSize) {
  const std::vector<Finding> v = RunRules(GcOutlierTrace());
  const Finding* f = Find(v, "outlier_iterations");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->estimated_savings_ns, 600'000);  // 2 x (400 - 100) us
  EXPECT_EQ(IntFact(*f, "gc_excess_ns"), 500'000);
  EXPECT_NE(f->title.find("500.00 us of garbage collection inside them (83% of their extra time)"),
            std::string::npos)
      << f->title;
  EXPECT_NE(f->recommendation.find("gc.freeze()"), std::string::npos);
}

TEST(Findings, OutlierIterationsWithoutGcRangesKeepTheGeneralCause) {
  // The same stalls under another range name: not garbage collection unless --gc-ranges says so.
  const std::vector<Finding> v = RunRules(GcOutlierTrace("my collector"));
  const Finding* f = Find(v, "outlier_iterations");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title.find("garbage collection inside them"), std::string::npos) << f->title;
  AnalyzeOptions options;
  options.gc_range_names = {"my collector"};
  const Trace t = GcOutlierTrace("my collector");
  StatusOr<std::vector<Finding>> named = ComputeFindings(*Ctx(t, options));
  ASSERT_TRUE(named.ok());
  const Finding* g = Find(*named, "outlier_iterations");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(g->title.find("garbage collection inside them"), std::string::npos) << g->title;
}

TEST(Findings, OutlierIterationsFire) {
  const std::vector<Finding> v = RunRules(OutlierTrace(6));
  const Finding* f = Find(v, "outlier_iterations");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->estimated_savings_ns, 200'000);
  EXPECT_EQ(IntFact(*f, "worst_iteration"), 6);
  EXPECT_EQ(IntFact(*f, "delta_kernel_ns"), 200'000);
  bool grown = false;
  for (const Fact& e : f->evidence) {
    if (e.key == "kernels_grown") {
      grown = std::get<std::string>(e.value).find("big_attention") != std::string::npos;
    }
  }
  EXPECT_TRUE(grown);
  EXPECT_NE(f->title.find("3.0x"), std::string::npos) << f->title;
}

TEST(Findings, OutlierIterationsQuietWhenSteady) {
  EXPECT_EQ(Find(RunRules(OutlierTrace(-1)), "outlier_iterations"), nullptr);
}

Trace GridTrace(Dim3 grid) {
  TraceFixture f;
  f.Device(0, "NVIDIA H100 80GB HBM3", 132);
  for (int i = 0; i < 4; ++i) {
    KernelRow k;
    k.start_ns = 1'000'000 + i * 200'000;
    k.end_ns = k.start_ns + 100'000;
    k.name = f.Intern("splitk_gemm");
    k.grid = grid;
    k.block = Dim3{128, 1, 1};
    k.registers_per_thread = 32;
    k.static_smem_bytes = 0;
    k.dynamic_smem_bytes = 0;
    f.builder().AddKernel(k);
  }
  return f.Build();
}

TEST(Findings, SmallGridFires) {
  const std::vector<Finding> v = RunRules(GridTrace(Dim3{33, 1, 1}));
  const Finding* f = Find(v, "small_grid");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(IntFact(*f, "blocks"), 33);
  EXPECT_EQ(IntFact(*f, "sms"), 132);
  // 128 threads x 32 registers: 16 blocks per SM on sm_90 (warps and registers limit it).
  EXPECT_EQ(IntFact(*f, "blocks_per_sm"), 16);
  // 99 of 132 SMs idle, half of that recovered: 400 us x 0.75 x 0.5.
  EXPECT_EQ(f->estimated_savings_ns, 150'000);
}

TEST(Findings, SmallGridQuietWhenGridFillsTheGpu) {
  EXPECT_EQ(Find(RunRules(GridTrace(Dim3{132 * 16, 1, 1})), "small_grid"), nullptr);
}

// 20 repetitions of norm -> add -> mul -> silu, each kernel `kernel_ns` long, 1 us apart.
Trace ChainTrace(DurationNs kernel_ns) {
  TraceFixture f;
  f.Device(0);
  TimeNs t = 1'000'000;
  const char* names[] = {"rms_norm_kernel", "add_kernel", "mul_kernel", "silu_kernel"};
  for (int i = 0; i < 20; ++i) {
    for (const char* n : names) {
      f.Kernel(n, t, t + kernel_ns);
      t += kernel_ns + 1'000;
    }
  }
  return f.Build();
}

TEST(Findings, KernelChainFires) {
  const std::vector<Finding> v = RunRules(ChainTrace(5'000));
  const Finding* f = Find(v, "kernel_chain");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(IntFact(*f, "occurrences"), 20);
  // Fused, a chain takes about its longest member: 20 x (4 x 5 us - 5 us).
  EXPECT_EQ(f->estimated_savings_ns, 20 * 15'000);
  EXPECT_EQ(
      std::count_if(v.begin(), v.end(), [](const Finding& x) { return x.id == "kernel_chain"; }),
      1);
}

// A chain that repeats within its own length (gemm, act, gemm, act, ... as a graph of layers
// runs): each kernel counts in one occurrence, so its kernel time never passes the trace's.
TEST(Findings, KernelChainCountsEachKernelOnce) {
  TraceFixture f;
  f.Device(0);
  TimeNs t = 1'000'000;
  for (int i = 0; i < 40; ++i) {
    for (const char* n : {"gemm_kernel", "silu_kernel"}) {
      f.Kernel(n, t, t + 5'000);
      t += 6'000;
    }
  }
  const std::vector<Finding> v = RunRules(f.Build());
  const Finding* chain = Find(v, "kernel_chain");
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(IntFact(*chain, "occurrences"), 20);  // 80 kernels, 4 per occurrence
  for (const Fact& e : chain->evidence) {
    if (e.key == "share_pct") {
      EXPECT_LE(std::get<double>(e.value), 100.0);
    }
  }
}

TEST(Findings, KernelChainQuietForLongKernels) {
  EXPECT_EQ(Find(RunRules(ChainTrace(50'000)), "kernel_chain"), nullptr);
}

// A 100 us GEMM, then a 100 us all-reduce: alone (overlapped = false) or beside a second GEMM on
// another stream.
Trace CommTrace(bool overlapped) {
  TraceFixture f;
  f.Device(0);
  f.Kernel("gemm_kernel", 1'000'000, 1'100'000);
  f.Kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 1'100'000,
           1'200'000, {0, 9});
  if (overlapped) f.Kernel("gemm_kernel", 1'100'000, 1'200'000);
  return f.Build();
}

TEST(Findings, ExposedCommFires) {
  const std::vector<Finding> v = RunRules(CommTrace(false));
  const Finding* f = Find(v, "exposed_comm");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->estimated_savings_ns, 100'000);
  EXPECT_EQ(IntFact(*f, "comm_kernels"), 1);
  EXPECT_NE(f->where.find("streams 9"), std::string::npos) << f->where;
}

TEST(Findings, ExposedCommQuietWhenOverlapped) {
  EXPECT_EQ(Find(RunRules(CommTrace(true)), "exposed_comm"), nullptr);
}

TEST(Findings, PipelineRanksFindings) {
  Report report;
  ASSERT_TRUE(AnalyzeTrace(*Ctx(OutlierTrace(6), AnalyzeOptions{}), "a", report).ok());
  ASSERT_TRUE(
      AnalyzeTrace(*Ctx(LoopTrace(10, 30, 3'000, 1'000), AnalyzeOptions{}), "b", report).ok());
  ASSERT_GE(report.findings.size(), 2u);
  EXPECT_TRUE(std::is_sorted(report.findings.begin(), report.findings.end(),
                             [](const Finding& a, const Finding& b) {
                               return a.estimated_savings_ns > b.estimated_savings_ns;
                             }));
  for (const Finding& f : report.findings) {
    EXPECT_EQ(f.input, f.id == "outlier_iterations" ? 0 : 1) << f.id;
  }
}

TEST(Findings, EmptyTraceHasNone) { EXPECT_TRUE(RunRules(TraceFixture().Build()).empty()); }

}  // namespace
}  // namespace sightline
