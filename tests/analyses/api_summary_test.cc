#include "analyses/api_summary/api_summary.h"

#include <gtest/gtest.h>

#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::HostThread;
using testing::TraceFixture;

Trace Calls() {
  return TraceFixture()
      .Api("cudaLaunchKernel_v7000", 0, 10)  // the builder strips nsys's version suffix
      .Api("cudaLaunchKernel", 20, 24, ApiKind::kRuntime, HostThread{100, 101})
      .Api("cudaLaunchKernel", 30, 36)
      .Api("cudaDeviceSynchronize", 40, 140)
      .Api("cuLaunchKernel", 150, 153, ApiKind::kDriver)
      .Api("cuLaunchKernel", 160, 163, ApiKind::kDriver)
      .Build();
}

TEST(ApiSummary, SummarizesRuntimeAndDriverCallsLikeNsys) {
  Trace t = Calls();
  StatusOr<ApiSummaryResult> r = ComputeApiSummary(*Ctx(t), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->calls, 6);
  EXPECT_EQ(r->total_ns, 10 + 4 + 6 + 100 + 3 + 3);
  EXPECT_EQ(r->runtime_calls, 4);
  EXPECT_EQ(r->runtime_ns, 120);
  EXPECT_EQ(r->driver_calls, 2);
  EXPECT_EQ(r->driver_ns, 6);
  ASSERT_EQ(r->rows.size(), 3u);

  EXPECT_EQ(t.str(r->rows[0].name), "cudaDeviceSynchronize");
  EXPECT_EQ(r->rows[0].api_class, ApiClass::kSync);
  EXPECT_NEAR(r->rows[0].time_pct, 100.0 * 100 / 126, 1e-12);

  const ApiSummaryRow& launch = r->rows[1];
  EXPECT_EQ(t.str(launch.name), "cudaLaunchKernel");
  EXPECT_EQ(launch.kind, ApiKind::kRuntime);
  EXPECT_EQ(launch.api_class, ApiClass::kLaunch);
  EXPECT_EQ(launch.stats.count, 3);
  EXPECT_EQ(launch.stats.total, 20);
  EXPECT_DOUBLE_EQ(launch.stats.median, 6);
  EXPECT_EQ(launch.stats.min, 4);
  EXPECT_EQ(launch.stats.max, 10);
  EXPECT_NEAR(launch.stats.stddev, 3.0550504633038935, 1e-9);

  EXPECT_EQ(t.str(r->rows[2].name), "cuLaunchKernel");
  EXPECT_EQ(r->rows[2].kind, ApiKind::kDriver);
  EXPECT_EQ(r->rows[2].stats.stddev, 0);
}

TEST(ApiSummary, SelectsRuntimeOrDriver) {
  Trace t = Calls();
  ApiSummaryOptions options;
  options.driver = false;
  StatusOr<ApiSummaryResult> r = ComputeApiSummary(*Ctx(t), options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->calls, 4);
  EXPECT_EQ(r->rows.size(), 2u);
  options.driver = true;
  options.runtime = false;
  r = ComputeApiSummary(*Ctx(t), options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->calls, 2);
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(r->rows[0].time_pct, 100);
}

TEST(ApiSummary, Section) {
  Trace t = Calls();
  Report report;
  ASSERT_TRUE(RunApiSummarySection(*Ctx(t, AnalyzeOptions{}), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  EXPECT_EQ(s.key, "api_summary");
  ASSERT_EQ(s.tables.size(), 1u);
  EXPECT_EQ(s.tables[0].rows.size(), 3u);
  EXPECT_EQ(s.tables[0].total_rows, -1);
  EXPECT_EQ(std::get<std::string>(s.tables[0].rows[0].back()), "cudaDeviceSynchronize");
}

TEST(ApiSummary, EmptyTraceHasANote) {
  Trace t = TraceFixture().Build();
  Report report;
  ASSERT_TRUE(RunApiSummarySection(*Ctx(t, AnalyzeOptions{}), 0, report).ok());
  EXPECT_TRUE(report.sections[0].tables.empty());
  EXPECT_EQ(report.sections[0].notes.size(), 1u);
}

}  // namespace
}  // namespace sightline
