// The all-reduce cost model (t = a + b * bytes per strategy): the fit recovers known a and b,
// chooses only where a fit covers the size, and tune's loss figures for the table and the model
// equal ones computed by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "allreduce/cost_model.h"
#include "allreduce/lut_tune.h"
#include "importers/allreduce_sweep/sweep_csv.h"

namespace sightline {
namespace {

TEST(AllReduceCostModel, FitRecoversKnownLatencyAndBandwidth) {
  // a = 4.5 us, 300 GB/s: b = 1e-3 / 300 us per byte; sizes 1 KB .. 256 MB.
  const double a = 4.5, b = 1e-3 / 300;
  std::vector<CostPoint> points;
  for (int64_t x = 1024; x <= (int64_t{1} << 28); x *= 4) {
    points.push_back({x, a + b * static_cast<double>(x)});
  }
  std::optional<LinearFit> f = FitLatencyBandwidth(points);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->a_us, a, 1e-9);
  EXPECT_NEAR(f->b_us_per_byte, b, 1e-15);
  EXPECT_NEAR(f->BandwidthGbps(), 300.0, 1e-6);
  EXPECT_LT(f->max_err_pct, 1e-9);
  EXPECT_FALSE(f->clamped);
  EXPECT_EQ(f->min_bytes, 1024);
  EXPECT_EQ(f->max_bytes, int64_t{1} << 28);

  // +-1% multiplicative noise, alternating: a and b within a few %.
  for (size_t i = 0; i < points.size(); ++i) points[i].time_us *= i % 2 ? 1.01 : 0.99;
  f = FitLatencyBandwidth(points);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->a_us, a, 0.03 * a);
  EXPECT_NEAR(f->BandwidthGbps(), 300.0, 0.03 * 300);
  EXPECT_NEAR(f->max_err_pct, 1.0, 0.5);
}

TEST(AllReduceCostModel, FitClampsAndNeedsTwoSizes) {
  EXPECT_FALSE(FitLatencyBandwidth({{1024, 5}, {1024, 6}}).has_value());
  EXPECT_FALSE(FitLatencyBandwidth({}).has_value());
  // Time falling with size: b would be negative; b = 0 and a is the relative-error mean.
  std::optional<LinearFit> f = FitLatencyBandwidth({{1024, 10}, {4096, 5}});
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->clamped);
  EXPECT_EQ(f->b_us_per_byte, 0);
  // argmin of ((a - 10) / 10)^2 + ((a - 5) / 5)^2: (1/10 + 1/5) / (1/100 + 1/25) = 6.
  EXPECT_NEAR(f->a_us, 6.0, 1e-12);
  EXPECT_TRUE(std::isinf(f->BandwidthGbps()));
}

TEST(AllReduceCostModel, ChoosesOnlyWhereAFitCovers) {
  CostModel m;
  LinearFit lamport;
  lamport.a_us = 3;
  lamport.b_us_per_byte = 1e-6;
  lamport.min_bytes = 1024;
  lamport.max_bytes = 1 << 20;
  LinearFit nccl = lamport;
  nccl.a_us = 6;
  nccl.max_bytes = 1 << 28;
  m.Add({2, ArFusion::kNone, ArMode::kGraph, ArStrategy::kLamport}, lamport);
  m.Add({2, ArFusion::kNone, ArMode::kGraph, ArStrategy::kNccl}, nccl);
  EXPECT_EQ(m.Choose(2, ArFusion::kNone, ArMode::kGraph, 4096), ArStrategy::kLamport);
  // Above Lamport's largest fitted size the harness skips it: never chosen there.
  EXPECT_EQ(m.Choose(2, ArFusion::kNone, ArMode::kGraph, 2 << 20), ArStrategy::kNccl);
  StrategyMask no_lamport = kAllStrategies;
  no_lamport[static_cast<int>(ArStrategy::kLamport)] = false;
  EXPECT_EQ(m.Choose(2, ArFusion::kNone, ArMode::kGraph, 4096, no_lamport), ArStrategy::kNccl);
  EXPECT_FALSE(m.Choose(2, ArFusion::kNone, ArMode::kGraph, 512).has_value());
  EXPECT_FALSE(m.Choose(4, ArFusion::kNone, ArMode::kGraph, 4096).has_value());
  EXPECT_FALSE(m.Choose(2, ArFusion::kNone, ArMode::kEager, 4096).has_value());
}

// NCCL t = 10 + 1e-5 x, one-shot t = 5 + 2e-5 x (us, x bytes), exactly, in a 1-D sweep of 15
// sizes (so that the fits follow these lines), and a 2-D grid at hidden 1024 whose cells are on
// the lines except NCCL at 1 token, measured at 4 us (faster than its line says).
std::string LinesCsv(bool with_hidden_2048) {
  auto nccl = [](int64_t x) { return 10 + 1e-5 * static_cast<double>(x); };
  auto oneshot = [](int64_t x) { return 5 + 2e-5 * static_cast<double>(x); };
  std::string csv = std::string(kSweepCsvHeader) + "\n";
  for (int64_t x = 1024; x <= (int64_t{1} << 24); x *= 2) {
    csv += fmt::format("2,bf16,{},0,0,nccl,none,graph,{},0,0\n", x, nccl(x));
    csv += fmt::format("2,bf16,{},0,0,oneshot,none,graph,{},0,0\n", x, oneshot(x));
  }
  for (int64_t tokens : {1, 16, 1024}) {
    const int64_t x = 1024 * tokens * 2;
    csv += fmt::format("2,bf16,{},{},1024,nccl,none,graph,{},0,0\n", x, tokens,
                       tokens == 1 ? 4.0 : nccl(x));
    csv += fmt::format("2,bf16,{},{},1024,oneshot,none,graph,{},0,0\n", x, tokens, oneshot(x));
  }
  if (with_hidden_2048) {  // hidden 2048: 1 and 1024 tokens measured, 16 tokens not
    for (int64_t tokens : {1, 1024}) {
      const int64_t x = 2048 * tokens * 2;
      csv += fmt::format("2,bf16,{},{},2048,nccl,none,graph,{},0,0\n", x, tokens, nccl(x));
      csv += fmt::format("2,bf16,{},{},2048,oneshot,none,graph,{},0,0\n", x, tokens, oneshot(x));
    }
  }
  return csv;
}

TEST(AllReduceCostModel, TuneLossesEqualHandComputed) {
  StatusOr<std::vector<SweepRow>> rows = ParseSweepCsv(LinesCsv(false), "lines.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  StatusOr<TuneResult> r = TuneAllReduce(*rows, TuneOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->checks.size(), 1u);
  const LutCheck& c = r->checks[0];
  // Cells (bytes): 2048: NCCL 4 (best), one-shot 5.04096; 32768: NCCL 10.32768, one-shot
  // 5.65536 (best); 2097152: NCCL 30.97152 (best), one-shot 46.94304.
  // The model follows the lines: one-shot, one-shot, NCCL. It loses only at 2048:
  // 5.04096 / 4 - 1 = 26.024%; mean over the 3 cells 8.675%.
  EXPECT_EQ(c.model.cells, 3);
  EXPECT_NEAR(c.model.worst_pct, 26.024, 1e-9);
  EXPECT_NEAR(c.model.mean_pct, 26.024 / 3, 1e-9);
  EXPECT_EQ(c.model.worst_tokens, 1);
  EXPECT_EQ(c.model.worst_bytes, 2048);
  ASSERT_EQ(c.disagreements.size(), 1u);
  EXPECT_EQ(c.disagreements[0].measured, ArStrategy::kNccl);
  EXPECT_EQ(c.disagreements[0].model, ArStrategy::kOneShot);
  EXPECT_NEAR(c.disagreements[0].loss_pct, 26.024, 1e-9);
  // The table holds the measured best: no loss.
  EXPECT_EQ(c.table.cells, 3);
  EXPECT_EQ(c.table.worst_pct, 0);
  // Always NCCL loses at 32768 only: 10.32768 / 5.65536 - 1 = 82.6180%.
  EXPECT_NEAR(c.nccl_only.worst_pct, (10.32768 / 5.65536 - 1) * 100, 1e-9);
  EXPECT_NEAR(c.nccl_only.mean_pct, (10.32768 / 5.65536 - 1) * 100 / 3, 1e-9);
  // The fits: one-shot exactly on its line (16 points, none off it); NCCL pulled by the 4 us cell.
  const LinearFit* one = nullptr;
  for (const ModelFitRow& f : r->fits) {
    if (f.key.strategy == ArStrategy::kOneShot) one = &f.fit;
  }
  ASSERT_NE(one, nullptr);
  EXPECT_NEAR(one->a_us, 5, 1e-9);
  EXPECT_NEAR(one->BandwidthGbps(), 50, 1e-6);
  EXPECT_EQ(one->points, 15 + 3);
  // The size sweep: every size on the lines, so the model always picks the measured winner.
  ASSERT_EQ(r->size_checks.size(), 1u);
  EXPECT_EQ(r->size_checks[0].model.cells, 15);
  EXPECT_EQ(r->size_checks[0].model.worst_pct, 0);
  EXPECT_TRUE(r->size_checks[0].disagreements.empty());
  const std::string summary = RenderTuneSummary(*r);
  EXPECT_NE(summary.find("26.0% / 8.7%"), std::string::npos) << summary;
  EXPECT_NE(summary.find("measured NCCL 4.00 us, model one-shot 5.04 us (+26.0%)"),
            std::string::npos)
      << summary;
}

TEST(AllReduceCostModel, ModelChoosesAtUnmeasuredGridPoints) {
  StatusOr<std::vector<SweepRow>> rows = ParseSweepCsv(LinesCsv(true), "lines.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  StatusOr<TuneResult> r = TuneAllReduce(*rows, TuneOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const LutTable& t = r->tables.at(0);
  const LutCheck& c = r->checks.at(0);
  EXPECT_EQ(c.cells_unmeasured, 1);
  EXPECT_EQ(c.cells_by_model, 1);
  // hidden 2048 x 16 tokens = 65536 bytes: NCCL 10.655 vs one-shot 6.311 on the lines.
  EXPECT_EQ(t.Select(2048, 16), ArStrategy::kOneShot);
  EXPECT_EQ(t.Select(2048, 1024), ArStrategy::kNccl);  // measured
  EXPECT_NE(RenderTuneSummary(*r).find("the cost model chose 1 of them"), std::string::npos);
}

}  // namespace
}  // namespace sightline
