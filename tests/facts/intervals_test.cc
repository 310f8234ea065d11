#include "facts/intervals.h"

#include <gtest/gtest.h>

#include "facts/trace_facts.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::TraceFixture;
using testing::Where;

TEST(Intervals, MergeSortsAndJoinsOverlappingAndTouching) {
  std::vector<Interval> merged = MergeIntervals({{10, 20}, {0, 5}, {5, 8}, {15, 30}, {40, 40}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0], (Interval{0, 8}));
  EXPECT_EQ(merged[1], (Interval{10, 30}));
  EXPECT_EQ(TotalLength(merged), 28);
  EXPECT_TRUE(MergeIntervals({}).empty());
}

TEST(Intervals, UnionAccumulatorMatchesMerge) {
  UnionAccumulator acc;
  for (Interval iv : std::vector<Interval>{{0, 5}, {3, 4}, {4, 9}, {20, 25}, {22, 30}}) {
    acc.Add(iv.start_ns, iv.end_ns);
  }
  EXPECT_EQ(acc.total(), 9 + 10);
  EXPECT_EQ(UnionAccumulator().total(), 0);
}

TEST(TraceFacts, BusyUsesKernelsAndMemopsOfOneDevice) {
  Trace t = TraceFixture()
                .Kernel("a", 0, 10)
                .Kernel("b", 5, 15, Where{0, 8})       // other stream, same device: overlaps
                .Kernel("c", 100, 200, Where{1, 7})    // other device
                .Memcpy(MemOpKind::kHtoD, 15, 20, 64)  // touches: merged
                .Memset(30, 35, 64)
                .Build();
  TraceFacts context(t);
  const std::vector<Interval>& d0 = context.gpu().Busy(0);
  ASSERT_EQ(d0.size(), 2u);
  EXPECT_EQ(d0[0], (Interval{0, 20}));
  EXPECT_EQ(d0[1], (Interval{30, 35}));
  const std::vector<Interval>& d1 = context.gpu().Busy(1);
  ASSERT_EQ(d1.size(), 1u);
  EXPECT_EQ(d1[0], (Interval{100, 200}));
  EXPECT_TRUE(context.gpu().Busy(5).empty());
  EXPECT_TRUE(context.gpu().Busy(-1).empty());
  EXPECT_EQ(context.gpu().GpuDevices(), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(&context.gpu().Busy(0), &d0);  // computed once
}

TEST(Intervals, BusyWithinClipsToWindow) {
  const std::vector<Interval> merged = {{0, 20}, {30, 35}, {50, 60}};
  EXPECT_EQ(BusyWithin(merged, 0, 100), 35);
  EXPECT_EQ(BusyWithin(merged, 10, 32), 10 + 2);
  EXPECT_EQ(BusyWithin(merged, 20, 30), 0);
  EXPECT_EQ(BusyWithin(merged, 55, 55), 0);
  EXPECT_EQ(BusyWithin(merged, 61, 70), 0);
  EXPECT_EQ(BusyWithin({}, 0, 10), 0);
}

TEST(Intervals, GapsWithinIsTheComplement) {
  const std::vector<Interval> merged = {{0, 20}, {30, 35}, {50, 60}};
  std::vector<Interval> gaps = GapsWithin(merged, 10, 55);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0], (Interval{20, 30}));
  EXPECT_EQ(gaps[1], (Interval{35, 50}));
  gaps = GapsWithin(merged, -5, 70);
  ASSERT_EQ(gaps.size(), 4u);
  EXPECT_EQ(gaps.front(), (Interval{-5, 0}));
  EXPECT_EQ(gaps.back(), (Interval{60, 70}));
}

}  // namespace
}  // namespace sightline
