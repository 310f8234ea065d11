#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "base/stats.h"
#include "base/status.h"
#include "base/string_pool.h"

namespace sightline {
namespace {

TEST(StringPool, InternsOnce) {
  StringPool pool;
  StringId a = pool.Intern("gemm");
  StringId b = pool.Intern("gemm");
  StringId c = pool.Intern("norm");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(pool.Get(c), "norm");
  EXPECT_EQ(pool.Get(StringId{0}), "");
}

TEST(Stats, MatchesNsysConventions) {
  std::vector<int64_t> v = {4, 1, 3, 2};
  DurationStats s = ComputeDurationStats(v);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.total, 10);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 4);
  EXPECT_NEAR(s.stddev, 1.2909944, 1e-6);  // sample standard deviation
}

// Issue 34 (found by fuzz_recorder on 32 cores): API call totals of hostile durations wrapped
// into negative times. Sums hold at the ends of int64.
TEST(Stats, SumsOfHugeDurationsSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(SaturatingAdd(5980780305148091680, 3458764513820621797), kMax);
  EXPECT_EQ(SaturatingAdd(-kMax, -10), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(SaturatingAdd(40, 2), 42);
  std::vector<int64_t> huge = {int64_t{1} << 62, int64_t{1} << 62, int64_t{1} << 62};
  const DurationStats st = ComputeDurationStats(huge);
  EXPECT_EQ(st.total, kMax);
  EXPECT_EQ(st.count, 3);
}

TEST(JsonWriter, EscapesAndReplacesBadUtf8) {
  JsonWriter w(0);
  w.BeginObject().Key("a\"b").String("x\n\xff").Key("n").Double(1.0 / 0.0).EndObject();
  EXPECT_EQ(w.str(), "{\"a\\\"b\":\"x\\n\xef\xbf\xbd\",\"n\":null}");
}

TEST(StatusOr, CarriesValueOrError) {
  StatusOr<int> ok = 3;
  StatusOr<int> bad = InvalidInputError("broken");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
}

// Student's t quantiles against the printed tables (two-sided 95%, 90%, 99%), symmetry, the normal
// limit, a fractional df between its neighbours, and NaN outside the domain.
TEST(Stats, StudentTQuantileMatchesTheTables) {
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.7062, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.975, 2), 4.3027, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.975, 4), 2.7764, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.2281, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.975, 30), 2.0423, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.95, 3), 2.3534, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.995, 5), 4.0321, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.975, 1e7), 1.95996, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.025, 4), -2.7764, 1e-4);
  EXPECT_EQ(StudentTQuantile(0.5, 7), 0);
  const double between = StudentTQuantile(0.975, 2.5);
  EXPECT_LT(between, 4.3027);
  EXPECT_GT(between, 3.1824);  // df 3
  EXPECT_TRUE(std::isnan(StudentTQuantile(1.0, 3)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(0.975, 0)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(0.975, std::nan(""))));
}

}  // namespace
}  // namespace sightline
