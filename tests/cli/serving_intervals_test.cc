// Tests for the intervals of the serving diff (analyses/serving/serving_intervals.h): the resampled
// percentile matches np.percentile when every request is drawn once, a planted +20% TTFT is
// inside its interval and 0 is not, and the same run against itself has 0 inside.
#include "analyses/serving/serving_intervals.h"

#include <gtest/gtest.h>

#include <random>

#include "analyses/serving/serving_diff.h"
#include "analyses/serving/serving_metrics.h"
#include "base/stats.h"
#include "reporters/reporter.h"
#include "testing/cli_runner.h"
#include "testing/status.h"

namespace sightline {
namespace {

// `n` requests with TTFT ~ ttft_ms (10% noise), 16 output tokens, ITL gaps ~ 20 ms.
RequestResults Requests(int n, double ttft_ms, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  RequestResults r;
  r.path = "run.json";
  r.duration_s = 100;
  for (int i = 0; i < n; ++i) {
    RequestRecord q;
    q.success = true;
    q.start_s = i * 0.1;
    q.ttft_s = ttft_ms * (1 + 0.1 * z(rng)) / 1e3;
    q.output_tokens = 16;
    for (int g = 0; g < 15; ++g) q.itl_s.push_back(0.020 * (1 + 0.1 * z(rng)));
    double sum = q.ttft_s;
    for (double g : q.itl_s) sum += g;
    q.latency_s = sum;
    r.requests.push_back(q);
  }
  return r;
}

ServingMetrics Metrics(const RequestResults& r) {
  return testing::ValueOrDie(ComputeServingMetrics(r, {}));
}

TEST(ServingIntervals, SamplesKeepEveryRequestsValues) {
  const ServingMetrics m = Metrics(Requests(50, 100, 1));
  EXPECT_EQ(m.samples.requests, 50u);
  ASSERT_EQ(m.samples.ttft.sorted_ns.size(), 50u);
  EXPECT_EQ(m.samples.itl.sorted_ns.size(), 50u * 15);
  EXPECT_TRUE(std::is_sorted(m.samples.itl.sorted_ns.begin(), m.samples.itl.sorted_ns.end()));
  // The samples are the figures the statistics come from.
  EXPECT_DOUBLE_EQ(PercentileOfSorted(m.samples.ttft.sorted_ns, 99), m.ttft.p99_ns);
  EXPECT_DOUBLE_EQ(PercentileOfSorted(m.samples.itl.sorted_ns, 50), m.itl.p50_ns);
}

TEST(ServingIntervals, PlantedTtftGrowthIsInsideItsIntervalAndZeroIsNot) {
  const ServingMetrics b = Metrics(Requests(300, 100, 2)), a = Metrics(Requests(300, 120, 3));
  const std::vector<ChangeInterval> ttft =
      PercentileChangeIntervals(b.samples, b.samples.ttft, a.samples, a.samples.ttft, {50, 99});
  ASSERT_EQ(ttft.size(), 2u);
  EXPECT_GT(ttft[0].lo, 10);
  EXPECT_LT(ttft[0].lo, 20);
  EXPECT_GT(ttft[0].hi, 20);
  EXPECT_LT(ttft[0].hi, 30);
  const double p50 = (a.ttft.p50_ns / b.ttft.p50_ns - 1) * 100;
  EXPECT_LT(ttft[0].lo, p50);
  EXPECT_GT(ttft[0].hi, p50);
  EXPECT_LT(ttft[0].hi - ttft[0].lo, ttft[1].hi - ttft[1].lo);  // the tail is less sure
  // ITL did not change: its interval holds 0.
  const std::vector<ChangeInterval> itl =
      PercentileChangeIntervals(b.samples, b.samples.itl, a.samples, a.samples.itl, {50, 90, 99});
  for (const ChangeInterval& c : itl) {
    EXPECT_LT(c.lo, 0);
    EXPECT_GT(c.hi, 0);
  }
}

// The gate reads the intervals: a TTFT 50% longer is worse at 10% (its whole interval above);
// the same run against a reseeded one cannot tell at 0% (the intervals straddle it) and says how
// many requests would decide; a threshold beyond the intervals passes.
TEST(ServingIntervals, TheGateIsThreeWayOnTheIntervals) {
  const ServingMetrics b = Metrics(Requests(400, 100, 1));
  const ServingMetrics slower = Metrics(Requests(400, 150, 2));
  Report worse;
  worse.inputs.resize(2);
  AddServingDiff(b, slower, 10.0, worse);
  EXPECT_TRUE(worse.gate.failed);
  EXPECT_FALSE(worse.gate.undecided);
  EXPECT_NE(worse.gate.message.find("TTFT p99 +"), std::string::npos) << worse.gate.message;

  const ServingMetrics same = Metrics(Requests(400, 100, 3));
  Report unsure;
  unsure.inputs.resize(2);
  AddServingDiff(b, same, 0.0, unsure);
  EXPECT_FALSE(unsure.gate.failed);
  EXPECT_TRUE(unsure.gate.undecided) << unsure.gate.message;
  EXPECT_NE(unsure.gate.message.find("cannot tell"), std::string::npos);
  const std::string json = RenderJsonReport(unsure);
  EXPECT_NE(json.find("\"result\": \"cannot tell\""), std::string::npos);

  Report pass;
  pass.inputs.resize(2);
  AddServingDiff(b, same, 50.0, pass);
  EXPECT_FALSE(pass.gate.failed);
  EXPECT_FALSE(pass.gate.undecided) << pass.gate.message;
}

// Several runs per side, each on a machine up to 25% faster or slower: one run against one can
// call an unchanged program slower (the requests' spread alone), three against three cannot (the
// intervals hold the spread between runs), and a TTFT twice as long in every run is still slower.
TEST(ServingIntervals, SeveralRunsHoldTheSpreadBetweenRuns) {
  const double factor[] = {0.8, 1.0, 1.25};
  auto side = [&](uint64_t seed, double ttft_ms, const std::vector<int>& order) {
    std::vector<RequestResults> runs;
    for (int k : order) runs.push_back(Requests(200, ttft_ms * factor[k], seed + k));
    return runs;
  };
  auto metrics = [](const std::vector<RequestResults>& runs) {
    std::vector<ServingMetrics> out;
    for (const RequestResults& r : runs) out.push_back(Metrics(r));
    return out;
  };
  const std::vector<RequestResults> b = side(10, 100, {0, 1, 2}), a = side(20, 100, {2, 0, 1});
  Report one;
  one.inputs.resize(2);
  AddServingDiff(Metrics(b[0]), Metrics(a[0]), 10.0, one);  // 0.8 against 1.25: +56%
  EXPECT_TRUE(one.gate.failed) << one.gate.message;
  EXPECT_NE(RenderJsonReport(one).find("one run on each side"), std::string::npos);

  const ServingMetrics pb = Metrics(PoolServingRuns(b)), pa = Metrics(PoolServingRuns(a));
  EXPECT_EQ(pb.completed, 600);
  Report runs;
  runs.inputs.resize(6);
  AddServingDiffRuns(pb, metrics(b), pa, metrics(a), 10.0, runs);
  EXPECT_FALSE(runs.gate.failed) << runs.gate.message;
  // The runs widen the pooled requests' interval of TTFT p99 on both sides.
  Report pooled_only;
  pooled_only.inputs.resize(2);
  AddServingDiff(pb, pa, std::nullopt, pooled_only);
  auto ttft_p99 = [](const Report& r) {
    const Table& t = r.sections.at(0).tables.at(0);
    for (const std::vector<Value>& row : t.rows) {
      if (std::get<std::string>(row[0]) == "TTFT p99") {
        return std::pair{std::get<double>(row[4]), std::get<double>(row[5])};
      }
    }
    return std::pair{0.0, 0.0};
  };
  const auto [lo_runs, hi_runs] = ttft_p99(runs);
  const auto [lo_pooled, hi_pooled] = ttft_p99(pooled_only);
  EXPECT_LT(lo_runs, lo_pooled);
  EXPECT_GT(hi_runs, hi_pooled);
  EXPECT_GT(hi_runs - lo_runs, 2 * (hi_pooled - lo_pooled));
  const std::string json = RenderJsonReport(runs);
  EXPECT_NE(json.find("\"runs_before\": 3"), std::string::npos);
  EXPECT_EQ(json.find("one run on each side"), std::string::npos);
  EXPECT_NE(json.find("spread between the 3 + 3 runs"), std::string::npos);

  const std::vector<RequestResults> slow = side(30, 200, {1, 2, 0});
  Report slower;
  slower.inputs.resize(6);
  AddServingDiffRuns(pb, metrics(b), Metrics(PoolServingRuns(slow)), metrics(slow), 10.0, slower);
  EXPECT_TRUE(slower.gate.failed) << slower.gate.message;
  EXPECT_NE(slower.gate.message.find("TTFT p99 +"), std::string::npos) << slower.gate.message;
}

TEST(ServingIntervals, NoSamplesNoInterval) {
  ServingMetrics b, a;
  b.ttft.p50_ns = 1;
  const std::vector<ChangeInterval> iv =
      PercentileChangeIntervals(b.samples, b.samples.ttft, a.samples, a.samples.ttft, {50});
  EXPECT_TRUE(std::isnan(iv[0].lo));
  Report report;
  report.inputs.resize(2);
  AddServingDiff(b, a, std::nullopt, report);
  const std::string json = RenderJsonReport(report);
  EXPECT_NE(json.find("\"change_low_pct\": null"), std::string::npos);
}

TEST(ServingIntervals, CliShowsTheIntervals) {
  const std::string sample =
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/serving_loop_h100.requests.jsonl";
  testing::CliResult r =
      testing::RunSightline("diff --format json '" + sample + "' '" + sample + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t row = r.out.find("\"metric\": \"TTFT p50\"");
  ASSERT_NE(row, std::string::npos);
  const std::string tail = r.out.substr(row, 400);
  EXPECT_NE(tail.find("\"change_low_pct\": -"), std::string::npos) << tail;
  EXPECT_EQ(tail.find("\"change_high_pct\": -"), std::string::npos) << tail;
}

}  // namespace
}  // namespace sightline
