#include "analyses/memops_summary/memops_summary.h"

#include <gtest/gtest.h>

#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::TraceFixture;
using testing::Where;

Trace Copies() {
  return TraceFixture()
      .Memcpy(MemOpKind::kHtoD, 0, 1'000, 10'000, {}, MemoryKind::kPageable, MemoryKind::kDevice)
      .Memcpy(MemOpKind::kHtoD, 2'000, 2'500, 20'000, {}, MemoryKind::kPinned, MemoryKind::kDevice)
      .Memcpy(MemOpKind::kHtoD, 3'000, 3'500, 20'000, {}, MemoryKind::kPinned, MemoryKind::kDevice)
      .Memcpy(MemOpKind::kDtoH, 4'000, 4'100, 1'000, {}, MemoryKind::kDevice, MemoryKind::kPageable)
      .Memset(5'000, 5'010, 4'096)
      .Memset(6'000, 6'030, 4'096, Where{1, 7})
      .Build();
}

TEST(MemOpsSummary, PerKindTimeAndSize) {
  Trace t = Copies();
  StatusOr<MemOpsSummaryResult> r = ComputeMemOpsSummary(*Ctx(t), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->count, 6);
  EXPECT_EQ(r->total_bytes, 10'000 + 40'000 + 1'000 + 8'192);
  EXPECT_EQ(r->total_ns, 1'000 + 500 + 500 + 100 + 10 + 30);
  ASSERT_EQ(r->kinds.size(), 3u);

  const MemOpKindRow& htod = r->kinds[0];
  EXPECT_EQ(htod.kind, MemOpKind::kHtoD);
  EXPECT_EQ(htod.time.count, 3);
  EXPECT_EQ(htod.time.total, 2'000);
  EXPECT_DOUBLE_EQ(htod.time.median, 500);
  EXPECT_EQ(htod.size.total, 50'000);
  EXPECT_DOUBLE_EQ(htod.size.median, 20'000);
  EXPECT_EQ(htod.size.min, 10'000);
  EXPECT_DOUBLE_EQ(htod.bandwidth_gbps, 25.0);  // 50,000 bytes / 2,000 ns
  EXPECT_NEAR(htod.time_pct, 100.0 * 2'000 / 2'140, 1e-12);

  EXPECT_EQ(r->kinds[1].kind, MemOpKind::kDtoH);
  EXPECT_DOUBLE_EQ(r->kinds[1].bandwidth_gbps, 10.0);
  EXPECT_EQ(r->kinds[2].kind, MemOpKind::kMemset);
  EXPECT_EQ(r->kinds[2].time.count, 2);
  EXPECT_EQ(r->kinds[2].size.total, 8'192);
}

TEST(MemOpsSummary, PerPathSeparatesPageableFromPinned) {
  Trace t = Copies();
  StatusOr<MemOpsSummaryResult> r = ComputeMemOpsSummary(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->paths.size(), 4u);
  // Both HtoD paths took 1,000 ns; ties keep the enum order (pageable before pinned).
  EXPECT_EQ(r->paths[0].kind, MemOpKind::kHtoD);
  EXPECT_EQ(r->paths[0].src_kind, MemoryKind::kPageable);
  EXPECT_EQ(r->paths[0].time.total, 1'000);
  EXPECT_EQ(r->paths[1].src_kind, MemoryKind::kPinned);
  EXPECT_EQ(r->paths[1].time.count, 2);
  EXPECT_EQ(r->paths[1].total_bytes, 40'000);
  EXPECT_DOUBLE_EQ(r->paths[1].bandwidth_gbps, 40.0);
  EXPECT_DOUBLE_EQ(r->paths[0].bandwidth_gbps, 10.0);
  EXPECT_EQ(r->paths[3].kind, MemOpKind::kMemset);
  EXPECT_EQ(r->paths[3].dst_kind, MemoryKind::kDevice);
}

TEST(MemOpsSummary, FiltersDevice) {
  Trace t = Copies();
  MemOpsSummaryOptions options;
  options.device = 1;
  StatusOr<MemOpsSummaryResult> r = ComputeMemOpsSummary(*Ctx(t), options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->count, 1);
  ASSERT_EQ(r->kinds.size(), 1u);
  EXPECT_EQ(r->kinds[0].kind, MemOpKind::kMemset);
  EXPECT_DOUBLE_EQ(r->kinds[0].time_pct, 100);
}

TEST(MemOpsSummary, Section) {
  Trace t = Copies();
  Report report;
  ASSERT_TRUE(RunMemOpsSummarySection(*Ctx(t, AnalyzeOptions{}), 0, report).ok());
  const Section& s = report.sections.at(0);
  EXPECT_EQ(s.key, "memops_summary");
  ASSERT_EQ(s.tables.size(), 2u);
  EXPECT_EQ(s.tables[0].rows.size(), 3u);
  for (const Column& c : s.tables[0].columns) {
    if (c.unit == Unit::kGBps) {
      EXPECT_TRUE(c.key.ends_with("_gbps")) << c.key;
    }
    if (c.unit == Unit::kBytes) {
      EXPECT_TRUE(c.key.ends_with("_bytes")) << c.key;
    }
    if (c.unit == Unit::kDurationNs) {
      EXPECT_TRUE(c.key.ends_with("_ns")) << c.key;
    }
  }
}

}  // namespace
}  // namespace sightline
