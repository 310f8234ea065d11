#include "analyses/kernel_summary/kernel_summary.h"

#include <gtest/gtest.h>

#include <random>

#include "analyses/common/group_stats.h"
#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::TraceFixture;
using testing::Where;

constexpr char kGemm[] = "ampere_sgemm_128x64_nn";
constexpr char kAdd[] =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
constexpr char kAdd2[] =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>)";

Trace ThreeKernels() {
  return TraceFixture()
      .Kernel(kGemm, 0, 100)
      .Kernel(kAdd, 100, 110)
      .Kernel(kGemm, 200, 400)
      .Kernel(kAdd2, 400, 405)
      .Kernel(kAdd, 500, 530)
      .Kernel(kGemm, 600, 1000, Where{1, 7})  // another device: nsys sums over all devices
      .Build();
}

TEST(KernelSummary, GroupsByFullNameLikeNsys) {
  Trace t = ThreeKernels();
  StatusOr<KernelSummaryResult> r = ComputeKernelSummary(*Ctx(t), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->instances, 6);
  EXPECT_EQ(r->total_ns, 100 + 10 + 200 + 5 + 30 + 400);
  ASSERT_EQ(r->rows.size(), 3u);

  const KernelSummaryRow& gemm = r->rows[0];
  EXPECT_EQ(t.str(gemm.name), kGemm);
  EXPECT_EQ(t.str(gemm.short_name), kGemm);
  EXPECT_EQ(gemm.category, KernelCategory::kGemm);
  EXPECT_EQ(gemm.stats.count, 3);
  EXPECT_EQ(gemm.stats.total, 700);
  EXPECT_DOUBLE_EQ(gemm.stats.mean, 700.0 / 3);
  EXPECT_DOUBLE_EQ(gemm.stats.median, 200);
  EXPECT_EQ(gemm.stats.min, 100);
  EXPECT_EQ(gemm.stats.max, 400);
  EXPECT_NEAR(gemm.stats.stddev, 152.7525231651947, 1e-9);  // sample stddev of 100, 200, 400
  EXPECT_NEAR(gemm.time_pct, 100.0 * 700 / 745, 1e-12);

  const KernelSummaryRow& add = r->rows[1];
  EXPECT_EQ(t.str(add.name), kAdd);
  EXPECT_EQ(t.str(add.short_name), "vectorized_elementwise_kernel");
  EXPECT_EQ(add.category, KernelCategory::kElementwise);
  EXPECT_EQ(add.stats.count, 2);
  EXPECT_DOUBLE_EQ(add.stats.median, 20);  // mean of the two middle values
  EXPECT_NEAR(add.stats.stddev, 14.142135623730951, 1e-9);

  EXPECT_EQ(t.str(r->rows[2].name), kAdd2);
  EXPECT_EQ(r->rows[2].stats.count, 1);
  EXPECT_EQ(r->rows[2].stats.stddev, 0);
}

TEST(KernelSummary, GroupsByShortNameAndFiltersDevice) {
  Trace t = ThreeKernels();
  KernelSummaryOptions options;
  options.group_by = KernelSummaryOptions::GroupBy::kShortName;
  StatusOr<KernelSummaryResult> r = ComputeKernelSummary(*Ctx(t), options);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 2u);  // both adds share "vectorized_elementwise_kernel"
  EXPECT_EQ(r->rows[1].stats.count, 3);
  EXPECT_EQ(r->rows[1].stats.total, 45);

  options.device = 0;
  r = ComputeKernelSummary(*Ctx(t), options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->instances, 5);
  EXPECT_EQ(r->rows[0].stats.total, 300);
}

TEST(KernelSummary, SortsByTotalThenInstancesThenName) {
  Trace t = TraceFixture()
                .Kernel("b_kernel", 0, 10)
                .Kernel("a_kernel", 10, 20)
                .Kernel("c_kernel", 20, 25)
                .Kernel("c_kernel", 25, 30)
                .Kernel("d_kernel", 30, 50)
                .Build();
  StatusOr<KernelSummaryResult> r = ComputeKernelSummary(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  std::vector<std::string_view> order;
  for (const KernelSummaryRow& row : r->rows) order.push_back(t.str(row.name));
  EXPECT_EQ(order, (std::vector<std::string_view>{"d_kernel", "a_kernel", "b_kernel", "c_kernel"}));
}

TEST(KernelSummary, SummarizesCategories) {
  Trace t = ThreeKernels();
  StatusOr<KernelSummaryResult> r = ComputeKernelSummary(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->categories.size(), 2u);
  EXPECT_EQ(r->categories[0].category, KernelCategory::kGemm);
  EXPECT_EQ(r->categories[0].instances, 3);
  EXPECT_EQ(r->categories[0].distinct_kernels, 1);
  EXPECT_EQ(r->categories[0].total_ns, 700);
  EXPECT_EQ(r->categories[1].category, KernelCategory::kElementwise);
  EXPECT_EQ(r->categories[1].instances, 3);
  EXPECT_EQ(r->categories[1].distinct_kernels, 2);
  EXPECT_EQ(r->categories[1].total_ns, 45);
  EXPECT_NEAR(r->categories[0].time_pct + r->categories[1].time_pct, 100, 1e-9);
}

TEST(KernelSummary, EmptyTrace) {
  Trace t = TraceFixture().Build();
  StatusOr<KernelSummaryResult> r = ComputeKernelSummary(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->instances, 0);
  EXPECT_TRUE(r->rows.empty());
  EXPECT_TRUE(r->categories.empty());
}

TEST(KernelSummary, SectionHasUnitsAndTruncates) {
  TraceFixture f;
  for (int i = 0; i < 60; ++i) f.Kernel("k" + std::to_string(i), i * 100, i * 100 + 1 + i);
  Trace t = f.Build();
  Report report;
  AnalyzeOptions options;
  options.top_n = 15;
  ASSERT_TRUE(RunKernelSummarySection(*Ctx(t, options), 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  EXPECT_EQ(s.key, "kernel_summary");
  ASSERT_EQ(s.tables.size(), 2u);
  const Table& kernels = s.tables[0];
  EXPECT_EQ(kernels.rows.size(), 15u);  // top_n
  EXPECT_EQ(kernels.total_rows, 60);
  EXPECT_EQ(kernels.columns[1].key, "total_ns");
  EXPECT_EQ(kernels.columns[1].unit, Unit::kDurationNs);
  EXPECT_EQ(std::get<int64_t>(kernels.rows[0][1]), 60);  // k59: 1 + 59 ns
  EXPECT_EQ(std::get<std::string>(kernels.rows[0].back()), "k59");
}

// The selection-based group statistics agree with the sort-based ComputeDurationStats.
TEST(GroupStats, MatchesComputeDurationStats) {
  std::mt19937_64 rng(7);
  for (int n : {1, 2, 3, 4, 5, 10, 11, 100, 1001}) {
    std::vector<int64_t> values(n);
    for (int64_t& v : values) v = static_cast<int64_t>(rng() % 1000);
    std::vector<int64_t> copy = values;
    const DurationStats want = ComputeDurationStats(copy);
    const DurationStats got = StatsBySelection(values.data(), values.data() + values.size());
    EXPECT_EQ(got.count, want.count);
    EXPECT_EQ(got.total, want.total);
    EXPECT_DOUBLE_EQ(got.mean, want.mean);
    EXPECT_DOUBLE_EQ(got.median, want.median) << n;
    EXPECT_EQ(got.min, want.min);
    EXPECT_EQ(got.max, want.max);
    EXPECT_DOUBLE_EQ(got.stddev, want.stddev);
    EXPECT_DOUBLE_EQ(got.p90, want.p90) << n;
    EXPECT_DOUBLE_EQ(got.p99, want.p99) << n;
  }
}

TEST(GroupStats, GroupsRowsAndSkipsNoGroup) {
  const std::vector<uint32_t> group = {0, 1, kNoGroup, 0, 1, 1};
  const std::vector<int64_t> value = {5, 1, 99, 7, 3, 2};
  std::vector<DurationStats> s = ComputeGroupStats(
      group.size(), 3, [&](size_t i) { return group[i]; }, [&](size_t i) { return value[i]; });
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].count, 2);
  EXPECT_EQ(s[0].total, 12);
  EXPECT_DOUBLE_EQ(s[0].median, 6);
  EXPECT_EQ(s[1].count, 3);
  EXPECT_DOUBLE_EQ(s[1].median, 2);
  EXPECT_EQ(s[2].count, 0);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// 8,000 kernels of 18 days each within the trace's window (the builder keeps them): their sum
// passes 2^63 ns. Saturated totals gave shares of 91.1% and 45.6%; the shares come from the exact
// sums then, and add up to 100%. (The importer refuses such a file: Reliability.*SumsPastInt64*.)
TEST(KernelSummary, SharesNeverPassOneHundredPercentWhenTotalsSaturate) {
  TraceFixture f;
  const int n = 8000;
  const TimeNs center = (TimeNs{1} << 49) + 1'000'000'000'000;
  const TimeNs half = (TimeNs{1} << 49) / 100 * 98;
  const TimeNs dur = (TimeNs{1} << 50) / 10 * 14;
  for (int i = 0; i < n; ++i) {
    const TimeNs start = center - half + static_cast<TimeNs>(i) * (2 * half / (n - 1));
    f.Kernel(i % 3 ? "big_a" : "big_b", start, start + dur);
  }
  Trace t = f.Build();
  ASSERT_EQ(t.kernels.size(), static_cast<size_t>(n));
  StatusOr<KernelSummaryResult> r = ComputeKernelSummary(*Ctx(t), {});
  ASSERT_TRUE(r.ok());
  double sum = 0;
  for (const KernelSummaryRow& row : r->rows) {
    EXPECT_LE(row.time_pct, 100.0);
    sum += row.time_pct;
  }
  EXPECT_NEAR(sum, 100.0, 1e-6);
  EXPECT_NEAR(r->rows[0].time_pct, 66.6625, 0.01);  // 5,333 of 8,000
  double categories = 0;
  for (const KernelCategoryRow& c : r->categories) categories += c.time_pct;
  EXPECT_NEAR(categories, 100.0, 1e-6);
}

}  // namespace
}  // namespace sightline
