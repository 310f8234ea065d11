// The finding rules over GPU metrics samples (analyses/findings/): memory_bound_phase (memory
// throughput high while the tensor cores idle, and SMs idle during communication) and
// busy_but_empty (the GPU active while its SMs are mostly empty).
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "analyses/findings/findings.h"
#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

TEST(GpuMetrics, MemoryBoundPhaseAndIdleSmsDuringComm) {
  TraceFixture f;
  f.Device(0);
  f.Launch("gemv_decode", 0, 10, 0, 10'000);                                     // memory-bound
  f.Launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 20, 30, 10'000, 20'000);  // alone
  const StringId read = f.Intern("DRAM Read Bandwidth [Throughput %]");
  const StringId write = f.Intern("DRAM Write Bandwidth [Throughput %]");
  const StringId tensor = f.Intern("Tensor Active [Throughput %]");
  const StringId sm = f.Intern("SMs Active [Throughput %]");
  for (int i = 0; i < 20; ++i) {
    const TimeNs t = i * 1'000;
    const bool gemv = t < 10'000;
    f.builder().AddCounter(t, 0, read, gemv ? 70.0 : 5.0);
    f.builder().AddCounter(t, 0, write, gemv ? 10.0 : 5.0);
    f.builder().AddCounter(t, 0, tensor, gemv ? 2.0 : 0.0);
    f.builder().AddCounter(t, 0, sm, gemv ? 95.0 : 12.0);
  }
  const Trace t = f.Build();
  auto ctx = Ctx(t);
  StatusOr<std::vector<Finding>> findings = ComputeFindings(*ctx);
  ASSERT_TRUE(findings.ok()) << findings.status().ToString();
  const Finding* bound = nullptr;
  const Finding* idle = nullptr;
  for (const Finding& x : *findings) {
    if (x.id == "memory_bound_phase") bound = &x;
    if (x.id == "idle_sms_during_comm") idle = &x;
  }
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(std::get<int64_t>(bound->evidence[0].value), 10'000);  // the GEMV's 10 samples
  ASSERT_NE(idle, nullptr);
  EXPECT_EQ(std::get<int64_t>(idle->evidence[0].value), 10'000);
  EXPECT_NEAR(std::get<double>(idle->evidence[2].value), 12.0, 1e-9);
}

TEST(GpuMetrics, MemoryBoundPhaseQuietWhenTensorCoresWork) {
  TraceFixture f;
  f.Device(0);
  f.Launch("gemm", 0, 10, 0, 10'000);
  const StringId read = f.Intern("DRAM Read Bandwidth [Throughput %]");
  const StringId tensor = f.Intern("Tensor Active [Throughput %]");
  for (int i = 0; i < 10; ++i) {
    f.builder().AddCounter(i * 1'000, 0, read, 80.0);
    f.builder().AddCounter(i * 1'000, 0, tensor, 60.0);
  }
  const Trace t = f.Build();
  auto ctx = Ctx(t);
  StatusOr<std::vector<Finding>> findings = ComputeFindings(*ctx);
  ASSERT_TRUE(findings.ok());
  for (const Finding& x : *findings) EXPECT_NE(x.id, "memory_bound_phase");
}

// busy_but_empty: GR Active high while SMs Active and SM Issue stay low (one-block kernels back to
// back) fires with the stretch and its kernels; a full GPU keeps it quiet.
TEST(GpuMetrics, BusyButEmptyFiresOnTinyKernelsOnly) {
  for (const bool tiny : {true, false}) {
    TraceFixture f;
    f.Device(0);
    for (int i = 0; i < 40; ++i)
      f.Launch("tiny_kernel", i * 10, i * 10 + 5, i * 500, i * 500 + 400);
    const StringId gr = f.Intern("GR Active [Throughput %]");
    const StringId sms = f.Intern("SMs Active [Throughput %]");
    const StringId issue = f.Intern("SM Issue [Throughput %]");
    for (int i = 0; i < 20; ++i) {
      f.builder().AddCounter(i * 1'000, 0, gr, 80.0);
      f.builder().AddCounter(i * 1'000, 0, sms, tiny ? 0.5 : 90.0);
      f.builder().AddCounter(i * 1'000, 0, issue, tiny ? 0.03 : 60.0);
    }
    const Trace t = f.Build();
    auto ctx = Ctx(t);
    StatusOr<std::vector<Finding>> findings = ComputeFindings(*ctx);
    ASSERT_TRUE(findings.ok()) << findings.status().ToString();
    const Finding* empty = nullptr;
    for (const Finding& x : *findings) {
      if (x.id == "busy_but_empty") empty = &x;
    }
    if (!tiny) {
      EXPECT_EQ(empty, nullptr);
      continue;
    }
    ASSERT_NE(empty, nullptr);
    EXPECT_EQ(std::get<int64_t>(empty->evidence[0].value), 20'000);  // 20 samples of 1 us
    EXPECT_NEAR(std::get<double>(empty->evidence[3].value), 0.5, 1e-9);
    EXPECT_EQ(std::get<int64_t>(empty->evidence[6].value), 40);
    EXPECT_NE(empty->where.find("tiny_kernel"), std::string::npos);
  }
}

}  // namespace
}  // namespace sightline
