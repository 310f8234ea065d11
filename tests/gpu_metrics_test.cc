// Tests for the GPU metrics (analyses/gpu_metrics.h) and their nsys import (GPU_METRICS joined to
// TARGET_INFO_GPU_METRICS by name; percent metrics as stored, clocks from Hz to MHz).
#include "analyses/gpu_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analyses/findings/findings.h"
#include "base/file_io.h"
#include "importers/importer.h"
#include "testing/cli_runner.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

TEST(GpuMetrics, DistributionAndBusyAgainstIdle) {
  TraceFixture f;
  f.Kernel("gemm", 1'000, 5'000);  // device 0 busy over [1, 5) us
  const StringId sm = f.Intern("SMs Active [Throughput %]");
  for (int i = 0; i < 10; ++i) {
    const TimeNs t = i * 1'000;  // samples at 0..9 us: 1..4 us fall in the busy stretch
    f.builder().AddCounter(t, 0, sm, t >= 1'000 && t < 5'000 ? 90.0 : 10.0);
  }
  const Trace trace = f.Build();
  StatusOr<GpuMetricsResult> r = ComputeGpuMetrics(*Ctx(trace), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 1u);
  const GpuMetricRow& row = r->rows[0];
  EXPECT_EQ(row.samples, 10);
  EXPECT_EQ(row.busy_samples, 4);
  EXPECT_DOUBLE_EQ(row.mean, (4 * 90.0 + 6 * 10.0) / 10);
  EXPECT_DOUBLE_EQ(row.mean_busy, 90.0);
  EXPECT_DOUBLE_EQ(row.mean_idle, 10.0);
  EXPECT_DOUBLE_EQ(row.max, 90.0);
  EXPECT_EQ(r->sample_period_ns, 1'000);
  EXPECT_EQ(trace.begin_ns(), 1'000);  // samples are not part of the trace's span
}

// Per kernel: the key metrics' samples taken while each kernel ran; a kernel no sample caught has
// none (NaN), and a metric that is not a key metric is not shown.
TEST(GpuMetrics, PerKernelMeansAndSeries) {
  TraceFixture f;
  f.Kernel("gemm", 1'000, 5'000);  // samples at 1..4 us
  f.Kernel("norm", 6'000, 8'000);  // samples at 6, 7 us
  f.Kernel("tiny", 8'100, 8'200);  // no sample
  const StringId sm = f.Intern("SMs Active [Throughput %]");
  const StringId tensor = f.Intern("Tensor Active [Throughput %]");
  const StringId clock = f.Intern("GPC Clock Frequency [MHz]");
  for (int i = 0; i < 10; ++i) {
    const TimeNs t = i * 1'000;
    f.builder().AddCounter(t, 0, sm, t >= 1'000 && t < 5'000 ? 90.0 : t >= 6'000 ? 30.0 : 0.0);
    f.builder().AddCounter(t, 0, tensor, t >= 1'000 && t < 5'000 ? 50.0 : 0.0);
    f.builder().AddCounter(t, 0, clock, 1980.0);
  }
  const Trace trace = f.Build();
  StatusOr<GpuMetricsResult> r = ComputeGpuMetrics(*Ctx(trace), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->key_metrics.size(), 2u);
  EXPECT_EQ(trace.str(r->key_metrics[0]), "SMs Active [Throughput %]");
  ASSERT_EQ(r->kernels.size(), 3u);
  EXPECT_EQ(trace.str(r->kernels[0].kernel), "gemm");
  EXPECT_EQ(r->kernels[0].samples, 4);
  EXPECT_DOUBLE_EQ(r->kernels[0].mean[0], 90.0);
  EXPECT_DOUBLE_EQ(r->kernels[0].mean[1], 50.0);
  EXPECT_EQ(trace.str(r->kernels[1].kernel), "norm");
  EXPECT_DOUBLE_EQ(r->kernels[1].mean[0], 30.0);
  EXPECT_EQ(r->kernels[2].samples, 0);
  EXPECT_TRUE(std::isnan(r->kernels[2].mean[0]));
  Report report;
  ASSERT_TRUE(RunGpuMetricsSection(*Ctx(trace), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  ASSERT_EQ(report.sections[0].series.size(), 1u);
  EXPECT_EQ(report.sections[0].series[0].key, "utilization_sms_active_device_0");
}

// sm_underfilled: a long kernel whose samples show the SMs 20% active fires; at 90% it stays quiet.
TEST(GpuMetrics, SmUnderfilledFiresAndStaysQuiet) {
  for (const double active : {20.0, 90.0}) {
    TraceFixture f;
    f.Device(0);
    f.Kernel("small_grid_kernel", 0, 100'000);  // 100 us, 20 samples of 5 us
    const StringId sm = f.Intern("SMs Active [Throughput %]");
    for (int i = 0; i < 20; ++i) f.builder().AddCounter(i * 5'000, 0, sm, active);
    const Trace trace = f.Build();
    StatusOr<std::vector<Finding>> findings = ComputeFindings(*Ctx(trace));
    ASSERT_TRUE(findings.ok());
    const auto it = std::find_if(findings->begin(), findings->end(),
                                 [](const Finding& x) { return x.id == "sm_underfilled"; });
    if (active > 40) {
      EXPECT_EQ(it, findings->end());
      continue;
    }
    ASSERT_NE(it, findings->end());
    EXPECT_EQ(it->estimated_savings_ns, 80'000);  // 100 us x (1 - 20%)
    EXPECT_NE(it->title.find("GPU 0"), std::string::npos);
  }
}

TEST(GpuMetrics, NoSamplesNoSection) {
  const Trace t = TraceFixture().Kernel("gemm", 0, 10).Build();
  Report report;
  report.inputs.emplace_back();
  ASSERT_TRUE(RunGpuMetricsSection(*Ctx(t), 0, report).ok());
  EXPECT_TRUE(report.sections.empty());
}

// The shared nsys 2025.3 export taken with --gpu-metrics-devices (../shared/traces; gzip'd there).
TEST(GpuMetricsShared, RealExport) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces is absent";
  const std::string gz = dir + "/nsys_2025.3_h100_gil_pysampling_gpumetrics_memusage.sqlite.gz";
  StatusOr<std::string> bytes = ReadFileToString(gz);
  if (!bytes.ok()) GTEST_SKIP() << "the export is absent";
  StatusOr<std::string> plain = GunzipToString(*bytes, gz);
  ASSERT_TRUE(plain.ok());
  const std::string path = testing::MakeTempDir() + "/gm.sqlite";
  ASSERT_TRUE(WriteFileAtomically(path, *plain).ok());
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // 14 metrics read (12 [Throughput %], 2 clocks) x 6,407 samples at 1 kHz.
  EXPECT_EQ(t->counters.size(), 14u * 6'407u);
  EXPECT_GT(t->diagnostics.Count(DiagCode::kGpuMetricsNotRead), 0);
  StatusOr<GpuMetricsResult> r = ComputeGpuMetrics(*Ctx(*t), {});
  ASSERT_TRUE(r.ok());
  const GpuMetricRow* sm = nullptr;
  const GpuMetricRow* clock = nullptr;
  for (const GpuMetricRow& row : r->rows) {
    if (t->str(row.name) == "SMs Active [Throughput %]") sm = &row;
    if (t->str(row.name) == "GPC Clock Frequency [MHz]") clock = &row;
  }
  ASSERT_NE(sm, nullptr);
  ASSERT_NE(clock, nullptr);
  // Measured: SMs active 95.1% on average while the timeline has work, 0.09% while it has none;
  // the GPC clock 1,985 MHz against 1,011 MHz.
  EXPECT_GT(sm->mean_busy, 90);
  EXPECT_LT(sm->mean_idle, 1);
  EXPECT_NEAR(clock->max, 1995, 1);
  EXPECT_NEAR(r->sample_period_ns, 1e6, 1e3);  // 1 kHz (measured 1.000018 ms)
}

}  // namespace
}  // namespace sightline
