// Tests for the GPU metrics (analyses/gpu_metrics/gpu_metrics.h) and their nsys import (GPU_METRICS
// joined to TARGET_INFO_GPU_METRICS by name; percent metrics as stored, clocks from Hz to MHz).
#include "analyses/gpu_metrics/gpu_metrics.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analyses/findings/findings.h"
#include "analyses/gpu_metrics/gpu_metrics_charts.h"
#include "analyses/gpu_metrics/gpu_metrics_intervals.h"
#include "analyses/overview/overview.h"
#include "base/file_io.h"
#include "importers/importer.h"
#include "importers/nsys/nsys_gpu_metrics_config.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/files.h"
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
  // Over time: one compute chart with both metrics; the clock is not charted.
  ASSERT_EQ(report.sections[0].series.size(), 1u);
  const Series& se = report.sections[0].series[0];
  EXPECT_EQ(se.key, "gpu_metrics_compute_device_0");
  ASSERT_EQ(se.lines.size(), 2u);
  EXPECT_EQ(se.lines[0].label, "SMs Active");
  EXPECT_EQ(se.lines[1].label, "Tensor Active");
}

// The buckets of a long series (10^5 samples into 200 buckets): each bucket's mean weighs the
// samples by how much of it they cover, so the buckets' means average back to the series' mean;
// a one-sample spike survives as the bucket's max; buckets no sample covers are NaN, not zero.
TEST(GpuMetricsCharts, BucketsKeepTheMeanAndTheMax) {
  std::vector<MetricSamples::Step> steps;
  constexpr int kSamples = 100'000;
  for (int i = 0; i < kSamples; ++i) {
    const TimeNs t = i * 1'000;                       // samples 1 us apart
    if (t >= 40'000'000 && t < 50'000'000) continue;  // a hole in the sampling: 10 ms
    const double v = i == 77'777 ? 100.0 : 10.0 + (i % 7);
    steps.push_back({t, t + 1'000, v});
  }
  double sum = 0;
  for (const auto& s : steps) sum += s.value;
  const double overall = sum / static_cast<double>(steps.size());
  // Origin 0, span 100 ms: 200 buckets of 0.5 ms (500 samples each); 20 of them in the hole.
  const MetricBuckets b = BucketMetric(steps, 0, 100'000'000, 200);
  ASSERT_EQ(b.mean.size(), 200u);
  EXPECT_EQ(b.samples, static_cast<int64_t>(steps.size()));
  double weighted = 0;
  int with_data = 0;
  for (int k = 0; k < 200; ++k) {
    const bool hole = k >= 80 && k < 100;
    EXPECT_EQ(std::isnan(b.mean[k]), hole) << k;
    EXPECT_EQ(std::isnan(b.max[k]), hole) << k;
    if (hole) continue;
    weighted += b.mean[k];  // equal coverage per bucket outside the hole
    ++with_data;
    EXPECT_LE(b.mean[k], b.max[k]);
    // The spike (sample 77,777, in bucket 155) is the max there and nowhere else.
    EXPECT_DOUBLE_EQ(b.max[k], k == 155 ? 100.0 : 16.0) << k;
  }
  EXPECT_NEAR(weighted / with_data, overall, 1e-9);
  EXPECT_LT(b.mean[155], 13.5);  // 13 on average; one sample in 500 adds 0.17
  // A bucket longer than a sample and a sample longer than a bucket.
  const std::vector<MetricSamples::Step> one = {{100, 400, 50.0}};
  const MetricBuckets c = BucketMetric(one, 0, 1'000, 10);  // buckets of 100 ns
  EXPECT_TRUE(std::isnan(c.mean[0]));
  EXPECT_DOUBLE_EQ(c.mean[1], 50.0);
  EXPECT_DOUBLE_EQ(c.mean[3], 50.0);
  EXPECT_TRUE(std::isnan(c.mean[4]));
}

// The charts: per device and kind, only the metrics the device has, on the x of the overview's
// utilization chart (same buckets, same origin); a trace without GPU metrics has none.
TEST(GpuMetricsCharts, SeriesPerKindOnlyForPresentMetricsAlignedWithUtilization) {
  TraceFixture f;
  f.Device(0);
  f.Device(1);
  f.Kernel("gemm", 0, 100'000);
  f.Kernel("gemm", 10'000, 90'000, {.device = 1});
  const StringId gr = f.Intern("GR Active [Throughput %]");
  const StringId sm = f.Intern("SMs Active [Throughput %]");
  const StringId issue = f.Intern("SM Issue [Throughput %]");
  const StringId read = f.Intern("DRAM Read Bandwidth [Throughput %]");
  const StringId pcie = f.Intern("PCIe RX Throughput [Throughput %]");
  const StringId clock = f.Intern("GPC Clock Frequency [MHz]");
  for (int i = 0; i < 100; ++i) {
    const TimeNs t = i * 1'000;
    for (StringId m : {gr, sm, issue, read, pcie, clock}) f.builder().AddCounter(t, 0, m, 40.0);
    f.builder().AddCounter(t, 1, read, 60.0);  // device 1: DRAM read only
  }
  const Trace t = f.Build();
  auto ctx = Ctx(t);
  Report report;
  ASSERT_TRUE(RunOverviewSection(*ctx, 0, report).ok());
  ASSERT_TRUE(RunGpuMetricsSection(*ctx, 0, report).ok());
  const Series* utilization = nullptr;
  std::map<std::string, const Series*> charts;
  for (const Section& s : report.sections) {
    for (const Series& se : s.series) {
      if (se.key == "utilization_device_0") utilization = &se;
      if (s.key == "gpu_metrics") charts[se.key] = &se;
    }
  }
  ASSERT_NE(utilization, nullptr);
  std::vector<std::string> keys;
  for (const auto& [key, se] : charts) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "gpu_metrics_compute_device_0", "gpu_metrics_interconnect_device_0",
                      "gpu_metrics_memory_device_0", "gpu_metrics_memory_device_1"}));
  auto labels = [](const Series* se) {
    std::vector<std::string> v;
    for (const Series::Line& l : se->lines) v.push_back(l.label);
    return v;
  };
  EXPECT_EQ(labels(charts["gpu_metrics_compute_device_0"]),
            (std::vector<std::string>{"GR Active", "SMs Active", "SM Issue"}));
  EXPECT_EQ(labels(charts["gpu_metrics_memory_device_0"]),
            (std::vector<std::string>{"DRAM Read Bandwidth"}));
  EXPECT_EQ(labels(charts["gpu_metrics_interconnect_device_0"]),
            (std::vector<std::string>{"PCIe RX Throughput"}));
  const Series& mem1 = *charts["gpu_metrics_memory_device_1"];
  EXPECT_EQ(mem1.style, SeriesStyle::kOverTime);
  EXPECT_EQ(mem1.x, utilization->x);
  ASSERT_EQ(mem1.lines[0].y.size(), utilization->x.size());
  EXPECT_DOUBLE_EQ(mem1.lines[0].y[100], 60.0);
  EXPECT_DOUBLE_EQ(mem1.lines[0].band_max[100], 60.0);

  const Trace bare = TraceFixture().Kernel("gemm", 0, 100'000).Build();
  Report none;
  ASSERT_TRUE(RunGpuMetricsSection(*Ctx(bare), 0, none).ok());
  EXPECT_TRUE(none.sections.empty());
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
  // The copy in ../shared has been redacted since it was recorded: its TARGET_INFO_SYSTEM_ENV may
  // have lost the GpuMetricsConfig row, and with it the warps' multipliers.
  bool has_config = false;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*) FROM TARGET_INFO_SYSTEM_ENV "
                           "WHERE name = 'GpuMetricsConfig'",
                           -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      has_config = sqlite3_column_int64(stmt, 0) > 0;
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
  }
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // With GpuMetricsConfig: 18 metrics read x 6,407 samples at 1 kHz: 12 [Throughput %], 2 clocks,
  // 4 warps [Avg Warps per Cycle] (with the config's multipliers); the 4 warps [Avg] sums are not
  // read. Without it the 4 per-cycle warps have no multiplier and are not read either (14 read).
  const size_t read = has_config ? 18 : 14;
  EXPECT_EQ(t->counters.size(), read * 6'407u);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kGpuMetricsNotRead),
            static_cast<int64_t>(22 - read) * 6'407);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysGpuMetricsConfigUnmatched), 0);
  EXPECT_GT(t->diagnostics.Count(DiagCode::kGpuMetricsNotRead), 0);
  StatusOr<GpuMetricsResult> r = ComputeGpuMetrics(*Ctx(*t), {});
  ASSERT_TRUE(r.ok());
  const GpuMetricRow* sm = nullptr;
  const GpuMetricRow* clock = nullptr;
  for (const GpuMetricRow& row : r->rows) {
    if (t->str(row.name) == "SMs Active [Throughput %]") sm = &row;
    if (t->str(row.name) == "GPC Clock Frequency [MHz]") clock = &row;
  }
  const GpuMetricRow* warps = nullptr;
  for (const GpuMetricRow& row : r->rows) {
    if (t->str(row.name) == "Unallocated Warps in Active SMs [Avg Warps per Cycle]") warps = &row;
  }
  ASSERT_NE(sm, nullptr);
  ASSERT_NE(clock, nullptr);
  if (has_config) {
    ASSERT_NE(warps, nullptr);
    EXPECT_DOUBLE_EQ(warps->max, 56.0);  // stored 112, multiplier 0.5 (64 warp slots per SM)
  } else {
    EXPECT_EQ(warps, nullptr);
  }
  // Measured: SMs active 95.1% on average while the timeline has work, 0.09% while it has none;
  // the GPC clock 1,985 MHz against 1,011 MHz.
  EXPECT_GT(sm->mean_busy, 90);
  EXPECT_LT(sm->mean_idle, 1);
  EXPECT_NEAR(clock->max, 1995, 1);
  EXPECT_NEAR(r->sample_period_ns, 1e6, 1e3);  // 1 kHz (measured 1.000018 ms)
  // Per iteration (NVTX step0..step7): each rests on the samples of its ~53 ms GPU span; the
  // steady steps keep the SMs ~96% active (measured 95.87-96.38%), the first one less (83.02%).
  AnalyzeOptions options;
  options.iterations_regex = "step\\d+";
  auto ctx = Ctx(*t, options);
  StatusOr<IntervalMetricsResult> per = ComputeIntervalMetrics(*ctx, {});
  ASSERT_TRUE(per.ok());
  ASSERT_EQ(per->iterations.size(), 8u);
  size_t sm_index = per->metrics.size();
  for (size_t k = 0; k < per->metrics.size(); ++k) {
    if (t->str(per->metrics[k]) == "SMs Active [Throughput %]") sm_index = k;
  }
  ASSERT_LT(sm_index, per->metrics.size());
  for (const IntervalMetricsRow& it : per->iterations) {
    const WeightedFigure& f = it.figures[sm_index];
    // One sample per ms of GPU span, give or take the two partial ones at its ends.
    EXPECT_NEAR(static_cast<double>(f.samples), it.span_ns / 1e6, 2.0) << it.label;
    if (it.index > 0) {
      EXPECT_GT(f.mean, 90) << it.label;
    }
  }
  EXPECT_LT(per->iterations[0].figures[sm_index].mean, per->iterations[1].figures[sm_index].mean);
}

constexpr std::string_view kConfig = R"(version: 7
metricSets:
  - name: General Metrics for NVIDIA TU10x (any frequency)
    alias: tu10x
    chips:
      - TU102
    metrics:
      - name: GPC Clock Frequency
        id: gpc__cycles_elapsed
        subMetrics:
          - name: MHz
            suffix: .avg.per_second
            multiplier: 9.9999999999999995e-07
        description: "The frequency: of the GPC clock"
  - name: General Metrics for NVIDIA GH100 (any frequency)
    alias: gh100
    chips:
      - GH100
    setSpecifier: Default
    metrics:
      - name: GPC Clock Frequency
        id: gpc__cycles_elapsed
        subMetrics:
          - name: MHz
            suffix: .avg.per_second
            multiplier: 1e-06
        color: "#8BDDB4"
      - name: Compute Warps in Flight
        id: tpc__warps
        subMetrics:
          - name: Throughput %
            suffix: .avg.pct_of_peak_sustained_elapsed
          - name: Avg Warps per Cycle
            suffix: .avg.per_cycle_elapsed
            multiplier: 0.5
        description: warps
)";

TEST(GpuMetricsConfig, ParsesSetsAndMultipliers) {
  const std::vector<GpuMetricSet> sets = ParseGpuMetricsConfig(kConfig);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].chips, std::vector<std::string>{"TU102"});
  ASSERT_EQ(sets[0].scales.size(), 1u);
  EXPECT_DOUBLE_EQ(sets[0].scales.at("GPC Clock Frequency [MHz]"), 1e-6);
  ASSERT_EQ(sets[1].scales.size(), 3u);
  EXPECT_DOUBLE_EQ(sets[1].scales.at("Compute Warps in Flight [Throughput %]"), 1.0);
  EXPECT_DOUBLE_EQ(sets[1].scales.at("Compute Warps in Flight [Avg Warps per Cycle]"), 0.5);
  // Both sets have the clock: the chip decides; only GH100 has the warps.
  EXPECT_EQ(PickGpuMetricSet(sets, {"GPC Clock Frequency [MHz]"}, "GH100"), &sets[1]);
  EXPECT_EQ(PickGpuMetricSet(sets, {"GPC Clock Frequency [MHz]"}, ""), &sets[0]);
  EXPECT_EQ(PickGpuMetricSet(sets, {"Compute Warps in Flight [Throughput %]"}, "TU102"), &sets[1]);
  EXPECT_EQ(PickGpuMetricSet(sets, {"NVLink RX [Throughput %]"}, "GH100"), nullptr);
  EXPECT_TRUE(ParseGpuMetricsConfig("not: [yaml").empty());
}

// Per iteration: each sample weighs by its overlap with the iteration's GPU span; the figure says
// how many samples it rests on.
TEST(GpuMetrics, PerIterationOverlapWeighted) {
  TraceFixture f;
  f.Device(0);
  f.Range("step0", 0, 1'000, RangeKind::kUserAnnotation);
  f.Range("step1", 1'000, 2'000, RangeKind::kUserAnnotation);
  f.Range("attention", 1'050, 1'100);            // an NVTX range in step 1
  f.Launch("gemm", 10, 20, 100, 600);            // step 0: GPU [100, 600)
  f.Launch("attn", 1'060, 1'070, 1'100, 1'400);  // step 1: GPU [1100, 1400)
  const StringId sm = f.Intern("SMs Active [Throughput %]");
  // Samples every 200 ns: 0..1800; values 10, 20, ..., 100.
  for (int i = 0; i < 10; ++i) f.builder().AddCounter(i * 200, 0, sm, 10.0 * (i + 1));
  const Trace t = f.Build();
  AnalyzeOptions options;
  options.iterations_regex = "step\\d+";
  auto ctx = Ctx(t, options);
  StatusOr<IntervalMetricsResult> r = ComputeIntervalMetrics(*ctx, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->metrics.size(), 1u);
  ASSERT_EQ(r->iterations.size(), 2u);
  // [100, 600): samples at 0 (100 ns of it, 10), 200 (200, 20), 400 (200, 30): mean 22.
  EXPECT_EQ(r->iterations[0].figures[0].samples, 3);
  EXPECT_DOUBLE_EQ(r->iterations[0].figures[0].mean, (100 * 10.0 + 200 * 20.0 + 200 * 30.0) / 500);
  EXPECT_DOUBLE_EQ(r->iterations[0].figures[0].p50, 20.0);
  // [1100, 1400): 1000 (100 ns, 60), 1200 (200 ns, 70).
  EXPECT_EQ(r->iterations[1].figures[0].samples, 2);
  EXPECT_DOUBLE_EQ(r->iterations[1].figures[0].mean, (100 * 60.0 + 200 * 70.0) / 300);
  ASSERT_EQ(r->ranges.size(), 1u);
  EXPECT_EQ(r->ranges[0].label, "attention");
  EXPECT_EQ(r->ranges[0].span_ns, 300);
}

// Issue 30: a range that launched no GPU work is not missing from the per-range metrics: it has
// its figures over its own time, so a range during which the GPU sat idle shows SMs Active 0.
TEST(GpuMetrics, RangeWithoutGpuWorkShowsTheIdleGpu) {
  TraceFixture f;
  f.Device(0);
  f.Range("attention", 0, 100);
  f.Launch("attn", 10, 20, 100, 600);  // GPU [100, 600)
  f.Range("sampling", 700, 900);       // host only; the GPU is idle until 1000
  f.Range("sampling", 950, 990);
  f.Launch("gemm", 1'000, 1'010, 1'000, 1'200);
  const StringId sm = f.Intern("SMs Active [Throughput %]");
  // Every 100 ns: 80% while a kernel runs, 0 otherwise.
  for (int i = 0; i < 14; ++i) {
    const int64_t t = i * 100;
    const bool busy = (t >= 100 && t < 600) || (t >= 1'000 && t < 1'200);
    f.builder().AddCounter(t, 0, sm, busy ? 80.0 : 0.0);
  }
  const Trace t = f.Build();
  auto ctx = Ctx(t);
  StatusOr<IntervalMetricsResult> r = ComputeIntervalMetrics(*ctx, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->ranges.size(), 1u);
  EXPECT_EQ(r->ranges[0].label, "attention");
  EXPECT_DOUBLE_EQ(r->ranges[0].figures[0].mean, 80.0);
  ASSERT_EQ(r->quiet_ranges.size(), 1u);
  const IntervalMetricsRow& quiet = r->quiet_ranges[0];
  EXPECT_EQ(quiet.label, "sampling");
  EXPECT_EQ(quiet.device, 0);
  EXPECT_EQ(quiet.instances, 2);
  EXPECT_EQ(quiet.span_ns, 240);
  EXPECT_EQ(quiet.figures[0].samples, 3);  // the samples at 700, 800, 900
  EXPECT_DOUBLE_EQ(quiet.figures[0].mean, 0.0);

  Report report;
  Section& s = report.AddSection("gpu_metrics", "GPU metrics", 0);
  ASSERT_TRUE(AddIntervalMetricTables(*ctx, s).ok());
  const Table* table = nullptr;
  for (const Table& x : s.tables) {
    if (x.key == "per_range_no_gpu_work") table = &x;
  }
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(table->rows[0][1]), "sampling");
}

// Issue 29: a range that captured graph kernels has the metrics of their replays, one GPU span
// per replay (not one across the loop); the range around the capture only holds the rest, and
// the section says how many graph kernels were placed by capture.
TEST(GpuMetrics, PerRangeCountsGraphKernelsWhereCaptured) {
  TraceFixture f;
  f.Device(0);
  f.Range("capture", 0, 100);
  f.Range("attention", 10, 50);
  f.Range("graph_step_0", 1'000, 1'100);
  f.Range("graph_step_1", 2'000, 2'100);
  f.Api("cudaGraphLaunch", 1'010, 1'020, ApiKind::kRuntime, {}, 77);
  f.Kernel("attn", 1'100, 1'300, {}, 77);
  f.Kernel("gemm", 1'300, 1'500, {}, 77);
  f.Api("cudaGraphLaunch", 2'010, 2'020, ApiKind::kRuntime, {}, 78);
  f.Kernel("attn", 2'100, 2'300, {}, 78);
  f.Kernel("gemm", 2'300, 2'500, {}, 78);
  const StringId sm = f.Intern("SMs Active [Throughput %]");
  // Every 100 ns: 10% during the first replay's attention, 90% everywhere else.
  for (int i = 0; i < 30; ++i) {
    f.builder().AddCounter(i * 100, 0, sm, (i == 11 || i == 12) ? 10.0 : 90.0);
  }
  Trace t = f.Build();
  ASSERT_EQ(t.kernels.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {  // rows by start: attn, gemm, attn, gemm
    const bool attn = t.str(t.kernels.name[i]) == "attn";
    t.kernels.graph_node[i] = 100 + static_cast<int64_t>(i);
    t.kernels.capture_node[i] = attn ? 1 : 2;
    t.kernels.capture_ns[i] = attn ? 20 : 60;
    t.kernels.capture_pid[i] = 100;
    t.kernels.capture_tid[i] = 100;
  }
  auto ctx = Ctx(t);
  StatusOr<IntervalMetricsResult> r = ComputeIntervalMetrics(*ctx, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->graph_kernels, 4);
  EXPECT_EQ(r->graph_kernels_by_capture, 4);
  EXPECT_EQ(r->graph_kernels_by_alignment, 0);
  auto row = [&](const std::string& label) -> const IntervalMetricsRow* {
    for (const IntervalMetricsRow& x : r->ranges) {
      if (x.label == label) return &x;
    }
    return nullptr;
  };
  const IntervalMetricsRow* attention = row("attention");
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->instances, 1);
  EXPECT_EQ(attention->span_ns, 400);  // [1100, 1300) and [2100, 2300), not [1100, 2300)
  EXPECT_DOUBLE_EQ(attention->figures[0].mean, (200 * 10.0 + 200 * 90.0) / 400);
  const IntervalMetricsRow* capture = row("capture");
  ASSERT_NE(capture, nullptr);
  EXPECT_EQ(capture->span_ns, 800);  // both replays, whole
  // The graph steps are the iterations: each has its own replay, by its launch.
  ASSERT_EQ(r->iterations.size(), 2u);
  EXPECT_EQ(r->iterations[0].label, "graph_step_0");
  EXPECT_EQ(r->iterations[0].span_ns, 400);

  Report report;
  Section& s = report.AddSection("gpu_metrics", "GPU metrics", 0);
  ASSERT_TRUE(AddIntervalMetricTables(*ctx, s).ok());
  bool stated = false;
  for (const Fact& fact : s.facts) {
    if (fact.key == "per_range_graph_by_capture_pct") {
      stated = true;
      EXPECT_DOUBLE_EQ(std::get<double>(fact.value), 100.0);
    }
  }
  EXPECT_TRUE(stated);
}

}  // namespace
}  // namespace sightline
