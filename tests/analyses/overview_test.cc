#include "analyses/overview/overview.h"

#include <gtest/gtest.h>

#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::HostThread;
using testing::TraceFixture;
using testing::Where;

Trace TwoDevices() {
  return TraceFixture()
      .Device(0, "NVIDIA H100 80GB HBM3", 132, 9, 0)
      .Process(100, "python")
      .Kernel("gemm", 100, 200, Where{0, 7})
      .Kernel("gemm", 150, 300, Where{0, 7})  // overlaps the first: counted once
      .Kernel("norm", 250, 400, Where{0, 8})  // another stream, overlapping
      .Memcpy(MemOpKind::kHtoD, 500, 600, 4096, Where{0, 7})
      .Memset(600, 650, 4096, Where{0, 7})
      .Kernel("gemm", 1'000, 1'100, Where{1, 3})  // device 1 has no device info
      .Api("cudaLaunchKernel", 50, 60)
      .Api("cudaMemcpyAsync", 40, 45, ApiKind::kRuntime, HostThread{100, 101})
      .Api("cuLaunchKernel", 70, 80, ApiKind::kDriver, HostThread{200, 5})
      .Range("step", 0, 700)
      .Range("forward", 10, 600, RangeKind::kNvtxStartEnd)
      .Range("ProfilerStep#1", 10, 20, RangeKind::kUserAnnotation)
      .Range("aten::mm", 30, 35, RangeKind::kCpuOp)
      .Range("aten::add", 36, 39, RangeKind::kCpuOp)
      .Range("model.py(12): forward", 30, 40, RangeKind::kPythonFunction)
      .Build();
}

TEST(Overview, SpanAndCounts) {
  Trace t = TwoDevices();
  StatusOr<OverviewResult> r = ComputeOverview(*Ctx(t), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->begin_ns, 0);
  EXPECT_EQ(r->end_ns, 1'100);
  EXPECT_EQ(r->duration_ns, 1'100);
  const EventCounts& c = r->counts;
  EXPECT_EQ(c.kernels, 4);
  EXPECT_EQ(c.memcpys, 1);
  EXPECT_EQ(c.memsets, 1);
  EXPECT_EQ(c.runtime_calls, 2);
  EXPECT_EQ(c.driver_calls, 1);
  EXPECT_EQ(c.nvtx_ranges, 2);
  EXPECT_EQ(c.annotations, 1);
  EXPECT_EQ(c.cpu_ops, 2);
  EXPECT_EQ(c.python_functions, 1);
}

TEST(Overview, BusyAndUtilizationPerDevice) {
  Trace t = TwoDevices();
  StatusOr<OverviewResult> r = ComputeOverview(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 2u);
  const DeviceUsage& d0 = r->devices[0];
  EXPECT_EQ(d0.device, 0);
  ASSERT_NE(d0.info, nullptr);
  EXPECT_EQ(d0.info->sm_count, 132);
  EXPECT_EQ(d0.kernels, 3);
  EXPECT_EQ(d0.memops, 2);
  EXPECT_EQ(d0.first_ns, 100);
  EXPECT_EQ(d0.last_ns, 650);
  EXPECT_EQ(d0.active_span_ns, 550);
  EXPECT_EQ(d0.busy_ns, 300 + 150);  // [100,400) and [500,650)
  EXPECT_DOUBLE_EQ(d0.utilization_pct, 100.0 * 450 / 550);

  const DeviceUsage& d1 = r->devices[1];
  EXPECT_EQ(d1.device, 1);
  EXPECT_EQ(d1.info, nullptr);
  EXPECT_EQ(d1.busy_ns, 100);
  EXPECT_DOUBLE_EQ(d1.utilization_pct, 100);
}

TEST(Overview, BusyAndUtilizationPerStream) {
  Trace t = TwoDevices();
  StatusOr<OverviewResult> r = ComputeOverview(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->streams.size(), 3u);
  const StreamUsage& s7 = r->streams[0];  // device 0, busiest first
  EXPECT_EQ(s7.device, 0);
  EXPECT_EQ(s7.stream, 7);
  EXPECT_EQ(s7.kernels, 2);
  EXPECT_EQ(s7.memops, 2);
  EXPECT_EQ(s7.busy_ns, 200 + 150);                         // [100,300) and [500,650)
  EXPECT_DOUBLE_EQ(s7.utilization_pct, 100.0 * 350 / 550);  // over the device's span
  const StreamUsage& s8 = r->streams[1];
  EXPECT_EQ(s8.stream, 8);
  EXPECT_EQ(s8.busy_ns, 150);
  EXPECT_DOUBLE_EQ(s8.utilization_pct, 100.0 * 150 / 550);
  EXPECT_EQ(r->streams[2].device, 1);
  EXPECT_DOUBLE_EQ(r->streams[2].utilization_pct, 100);
}

TEST(Overview, ProcessesAndThreads) {
  Trace t = TwoDevices();
  StatusOr<OverviewResult> r = ComputeOverview(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->processes.size(), 2u);
  EXPECT_EQ(r->processes[0].pid, 100);
  EXPECT_EQ(r->processes[0].name, "python");
  EXPECT_EQ(r->processes[0].threads, 2);
  EXPECT_EQ(r->processes[1].pid, 200);
  EXPECT_EQ(r->processes[1].threads, 1);
  EXPECT_EQ(r->threads, 3);
}

TEST(Overview, EmptyTrace) {
  Trace t = TraceFixture().Build();
  StatusOr<OverviewResult> r = ComputeOverview(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->duration_ns, 0);
  EXPECT_TRUE(r->devices.empty());
  EXPECT_TRUE(r->streams.empty());
  Report report;
  EXPECT_TRUE(RunOverviewSection(*Ctx(t, AnalyzeOptions{}), 0, report).ok());
}

TEST(Overview, SectionCarriesUnits) {
  Trace t = TwoDevices();
  Report report;
  ASSERT_TRUE(RunOverviewSection(*Ctx(t, AnalyzeOptions{}), 0, report).ok());
  const Section& s = report.sections.at(0);
  EXPECT_EQ(s.key, "overview");
  ASSERT_GE(s.tables.size(), 2u);
  EXPECT_EQ(s.tables[0].key, "devices");
  EXPECT_EQ(s.tables[0].rows.size(), 2u);
  for (const Table& table : s.tables) {
    for (const Column& c : table.columns) {
      if (c.unit == Unit::kPercent) {
        EXPECT_TRUE(c.key.ends_with("_pct")) << c.key;
      }
      if (c.unit == Unit::kDurationNs) {
        EXPECT_TRUE(c.key.ends_with("_ns")) << c.key;
      }
      if (c.unit == Unit::kBytes) {
        EXPECT_TRUE(c.key.ends_with("_bytes")) << c.key;
      }
    }
  }
}

}  // namespace
}  // namespace sightline
