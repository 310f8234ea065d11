// The TensorRT-LLM talk's two kernel case studies (issue 19), diagnosed from the exports and
// recordings committed under examples/case_studies/*/results (made on an H200 by each case's
// run.sh): the diagnosis must reproduce on a machine without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "importers/ncu/ncu_source.h"
#include "kernel/ncu_report.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

std::string Fp8(const std::string& name) {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/examples/case_studies/fp8_block_quant/results/" +
         name;
}
std::string Mlp(const std::string& name) {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/examples/case_studies/gated_mlp/results/" + name;
}

using testing::Slurp;

const Table* FindTable(const Report& r, const std::string& section, const std::string& table) {
  for (const Section& s : r.sections) {
    if (s.key != section) continue;
    for (const Table& t : s.tables) {
      if (t.key == table) return &t;
    }
  }
  return nullptr;
}

double Cell(const Table& t, size_t row, const std::string& column) {
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (t.columns[c].key != column) continue;
    const Value& v = t.rows[row][c];
    if (const double* d = std::get_if<double>(&v)) return *d;
    if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  }
  return NAN;
}

// Row of a before/after pair table by metric name prefix.
size_t MetricRow(const Table& t, const std::string& prefix) {
  for (size_t i = 0; i < t.rows.size(); ++i) {
    if (std::get<std::string>(t.rows[i][0]).starts_with(prefix)) return i;
  }
  ADD_FAILURE() << "no metric " << prefix;
  return 0;
}

NcuInput Merged(const std::string& details, const std::string& raw) {
  std::vector<NcuExport> e;
  e.push_back(*ReadNcuCsv(Fp8(details)));
  e.push_back(*ReadNcuCsv(Fp8(raw)));
  std::vector<NcuInput> in = GroupNcuExports(std::move(e));
  EXPECT_EQ(in.size(), 1u);
  return in.front();
}

TEST(CaseStudyFp8, NaiveKernelIsLatencyBoundWithOneBlockPerSm) {
  const NcuInput in = Merged("ncu_before.csv", "ncu_before_raw.csv");
  ASSERT_EQ(in.kernels.size(), 1u);
  const NcuKernelAnalysis k = AnalyzeNcuKernel(in.kernels[0]);
  EXPECT_EQ(k.short_name, "quant_naive_kernel");
  EXPECT_EQ(k.bound, "latency");
  ASSERT_FALSE(k.stalls.empty());
  EXPECT_EQ(k.stalls[0].reason, "long_scoreboard");
  EXPECT_EQ(k.grid_blocks, k.sm_count);  // one block per SM
  EXPECT_LT(k.achieved_occupancy_pct, 0.25 * k.theoretical_occupancy_pct);
  EXPECT_LT(k.eligible_warps, 1.0);
  // The talk's "1.99 active warps per scheduler of 16": the launch shape makes ours the same.
  EXPECT_LT(k.achieved_warps_per_sm / 4, 0.25 * k.theoretical_warps_per_sm / 4);
  EXPECT_EQ(k.theoretical_warps_per_sm, 64);
  bool grid_hint = false;
  for (const std::string& h : k.hints) {
    grid_hint |= h.find("grid too small") != std::string::npos &&
                 h.find(std::to_string(k.grid_blocks) + " blocks") != std::string::npos;
  }
  EXPECT_TRUE(grid_hint);
}

TEST(CaseStudyFp8, RenamedKernelsPairByLaunchOrder) {
  const Report r = BuildNcuReport({Merged("ncu_before.csv", "ncu_before_raw.csv"),
                                   Merged("ncu_after.csv", "ncu_after_raw.csv")},
                                  {});
  const Table* side = FindTable(r, "ncu_comparison", "kernels");
  ASSERT_NE(side, nullptr);
  ASSERT_EQ(side->rows.size(), 1u);  // one row, not the two names apart
  EXPECT_EQ(std::get<std::string>(side->rows[0][0]), "quant_naive_kernel -> quant_opt_kernel");
  EXPECT_GT(Cell(*side, 0, "speedup"), 2.0);
  const Section& cmp = r.sections.back();
  EXPECT_NE(std::get<std::string>(cmp.facts[0].value).find("launch order"), std::string::npos);
  const Table* pair = FindTable(r, "ncu_comparison", "pair_0");
  ASSERT_NE(pair, nullptr);
  const size_t occ = MetricRow(*pair, "achieved occupancy");
  EXPECT_GT(Cell(*pair, occ, "after"), 3 * Cell(*pair, occ, "before"));
  const size_t sm = MetricRow(*pair, "compute (SM) throughput");
  EXPECT_GT(Cell(*pair, sm, "after"), 2 * Cell(*pair, sm, "before"));
  const size_t grid = MetricRow(*pair, "grid");
  EXPECT_EQ(Cell(*pair, grid, "after"), 8 * Cell(*pair, grid, "before"));
  const size_t lsb = MetricRow(*pair, "stall: Long scoreboard");
  EXPECT_LT(Cell(*pair, lsb, "after"), Cell(*pair, lsb, "before"));
}

TEST(CaseStudyFp8, ExplicitPairOverridesNames) {
  // The two exports in the other order of names: --pair names which is which.
  NcuReportOptions o;
  o.pairs = {{"quant_naive_kernel", "quant_opt_kernel"}};
  const Report r = BuildNcuReport({Merged("ncu_before.csv", "ncu_before_raw.csv"),
                                   Merged("ncu_after.csv", "ncu_after_raw.csv")},
                                  o);
  const Section& cmp = r.sections.back();
  EXPECT_NE(std::get<std::string>(cmp.facts[0].value).find("renamed by --pair"), std::string::npos);
  EXPECT_EQ(FindTable(r, "ncu_comparison", "kernels")->rows.size(), 1u);
  // The same from the command line; a pair without '=' is refused.
  testing::CliResult cli =
      testing::RunSightline("ncu --pair quant_naive_kernel=quant_opt_kernel " +
                            Fp8("ncu_before.csv") + " " + Fp8("ncu_after.csv"));
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("1 renamed by --pair"), std::string::npos) << cli.out;
  EXPECT_EQ(cli.out.find("paired by launch order"), std::string::npos);
  cli = testing::RunSightline("ncu --pair quant_naive_kernel " + Fp8("ncu_before.csv") + " " +
                              Fp8("ncu_after.csv"));
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("--pair takes OLD=NEW"), std::string::npos) << cli.err;
}

TEST(CaseStudyFp8, SourcePageNamesTheLoadThenUseLine) {
  StatusOr<NcuSourceExport> e =
      ParseNcuSourceCsv(Slurp(Fp8("ncu_before_source_cuda_sass.csv")), "before");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->view, "cuda,sass");
  ASSERT_EQ(e->kernels.size(), 1u);
  const NcuSourceKernel& k = e->kernels[0];
  EXPECT_GT(k.total_samples, 0);
  Report r;
  AddNcuSourceSections(r, {*e}, 5);
  const Table* lines = FindTable(r, "ncu_source", "lines");
  ASSERT_NE(lines, nullptr);
  // The hottest line is the amax loop that loads one bf16 and uses it at once, in the user's file
  // (not the cuda_bf16.hpp line the conversion was inlined from).
  const std::string top = std::get<std::string>(lines->rows[0][0]);
  EXPECT_TRUE(top.starts_with("fp8_block_quant.cu:")) << top;
  const int line = std::stoi(top.substr(top.find(':') + 1));
  std::ifstream src(std::string(SIGHTLINE_SOURCE_DIR) +
                    "/examples/case_studies/fp8_block_quant/fp8_block_quant.cu");
  std::string text;
  for (int i = 0; i < line; ++i) std::getline(src, text);
  EXPECT_NE(text.find("amax = fmaxf(amax, fabsf(__bfloat162float(src["), std::string::npos) << text;
  EXPECT_EQ(std::get<std::string>(lines->rows[0][4]), "Long scoreboard");
  EXPECT_GT(Cell(*lines, 0, "reason_share_pct"), 90.0);
  // Samples are counted once per instruction: the lines' shares add up to at most 100%.
  double sum = 0;
  for (size_t i = 0; i < lines->rows.size(); ++i) sum += Cell(*lines, i, "share_pct");
  EXPECT_LE(sum, 100.0 + 1e-6);
}

TEST(CaseStudyFp8, SourcePageSassOnlyAndErrors) {
  StatusOr<NcuSourceExport> e = ParseNcuSourceCsv(Slurp(Fp8("ncu_after_source_sass.csv")), "after");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->view, "sass");
  ASSERT_EQ(e->kernels.size(), 1u);
  EXPECT_NE(e->kernels[0].name.find("quant_opt_kernel"), std::string::npos);
  for (const NcuSourceRow& r : e->kernels[0].instructions) EXPECT_EQ(r.line_no, -1);
  // --print-source cuda alone has no counters: an error naming the flags.
  testing::CliResult cli = testing::RunSightline("ncu " + Fp8("ncu_before_source_cuda.csv"));
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("--print-source sass"), std::string::npos) << cli.err;
  // Beside the details export, in one command.
  cli = testing::RunSightline("ncu " + Fp8("ncu_before.csv") + " " +
                              Fp8("ncu_before_source_cuda_sass.csv"));
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("hottest line: fp8_block_quant.cu:"), std::string::npos);
  EXPECT_NE(cli.out.find("Kernel 0: quant_naive_kernel"), std::string::npos);
}

TEST(CaseStudyFp8, AnalyzeNamesTheShareAndTheSmallGrid) {
  testing::CliResult r =
      testing::RunSightline("analyze --format json " + Fp8("record_naive.slrec"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"id\": \"small_grid\""), std::string::npos);
  EXPECT_NE(r.out.find("quant_naive_kernel runs 132 blocks where 132 SMs x 8 resident blocks"),
            std::string::npos);
  r = testing::RunSightline("analyze " + Fp8("record_naive.slrec"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The first finding is the small grid, with a non-zero estimate.
  const size_t first = r.out.find("  1. [");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(r.out.find("Small grid", first), r.out.find("Small grid: quant_naive_kernel"));
  EXPECT_LT(r.out.find("Small grid", first), r.out.find("  2. [", first));
  EXPECT_EQ(
      r.out.find("quant_naive_kernel runs 132 blocks where 132 SMs x 8 resident blocks = 1056 "
                 "fit at once (saves ~0 ns)"),
      std::string::npos);
  // The kernel table puts the quantization category first.
  const size_t cat = r.out.find("Kernel time by category");
  ASSERT_NE(cat, std::string::npos);
  EXPECT_LT(r.out.find("quantization", cat), r.out.find("GEMM", cat));
  // After the fix the rule stays quiet for the quantization kernel.
  r = testing::RunSightline("analyze " + Fp8("record_opt.slrec"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("Small grid: quant_opt_kernel"), std::string::npos);
}

TEST(CaseStudyFp8, DiffShowsTheStepGain) {
  testing::CliResult r = testing::RunSightline("diff --format json " + Fp8("record_naive.slrec") +
                                               " " + Fp8("record_opt.slrec"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The host loop queues work ahead of the GPU, so its step time hardly moves (the interval holds
  // 0); the GPU time launched per step (median) is +297% and decides.
  r = testing::RunSightline("diff --fail-if-slower 10 " + Fp8("record_opt.slrec") + " " +
                            Fp8("record_naive.slrec"));
  EXPECT_EQ(r.exit_code, 1) << "naive after opt must read as a regression\n" << r.out;
  EXPECT_NE(r.err.find("median GPU time launched +29"), std::string::npos) << r.err;
  r = testing::RunSightline("diff --fail-if-slower 10 " + Fp8("record_naive.slrec") + " " +
                            Fp8("record_opt.slrec"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // At 0% the step time's noise straddles the threshold: the gate cannot tell (exit 4).
  r = testing::RunSightline("diff --fail-if-slower 0 " + Fp8("record_naive.slrec") + " " +
                            Fp8("record_opt.slrec"));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.out.find("quant_naive_kernel"), std::string::npos);
}

TEST(CaseStudyGatedMlp, SiblingGemmsOnlyBeforeTheFusion) {
  testing::CliResult before = testing::RunSightline("analyze " + Mlp("trace_before.slrec"));
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_NE(before.out.find("Sibling GEMMs:"), std::string::npos);
  EXPECT_NE(before.out.find("runs twice back to back with the same grid, 100 times"),
            std::string::npos);
  testing::CliResult after = testing::RunSightline("analyze " + Mlp("trace_after.slrec"));
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out.find("Sibling GEMMs:"), std::string::npos);
  // The nsys export of the same run gives the same finding.
  testing::CliResult nsys = testing::RunSightline("analyze " + Mlp("trace_before.nsys.sqlite"));
  ASSERT_EQ(nsys.exit_code, 0) << nsys.err;
  EXPECT_NE(nsys.out.find("Sibling GEMMs:"), std::string::npos);
}

TEST(CaseStudyGatedMlp, DiffShowsOneLaunchLessPerLayer) {
  testing::CliResult r = testing::RunSightline("diff --format json " + Mlp("trace_before.slrec") +
                                               " " + Mlp("trace_after.slrec"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 100 MLPs (25 steps x 4 layers): 5 kernels each before (FC, gate, silu_mul, down + its
  // split-K reduce), 4 after.
  testing::CliResult text =
      testing::RunSightline("diff " + Mlp("trace_before.slrec") + " " + Mlp("trace_after.slrec"));
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("swiglu_kernel"), std::string::npos);
  EXPECT_NE(text.out.find("silu_mul_kernel"), std::string::npos);
  EXPECT_NE(text.out.find("500"), std::string::npos);
  EXPECT_NE(text.out.find("400"), std::string::npos);
}

}  // namespace
}  // namespace sightline
