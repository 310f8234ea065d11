// check-claims: numbers read with their units and rounding, and matched to a report's numbers;
// planted wrong numbers are contradicted, numbers about nothing in the report unsupported.
#include "query/claims.h"

#include <gtest/gtest.h>

#include <string>

#include "base/file_io.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/status.h"

namespace sightline {
namespace {

using testing::ValueOrDie;

TEST(Claims, NumbersAreReadWithTheirUnitsAndRounding) {
  const std::vector<Claim> c = ExtractClaims(
      "GEMM took 12.4% (12.39% exactly), 41.4 ms or 41,404.7 \xC2\xB5s, 1.5 GiB, 3.2x faster, "
      "900 GB/s, 15,476 kernels.");
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0].text, "12.4%");
  EXPECT_EQ(c[0].q.dim, Dimension::kPercent);
  EXPECT_DOUBLE_EQ(c[0].q.lo, 12.35);
  EXPECT_DOUBLE_EQ(c[0].q.hi, 12.45);
  EXPECT_NEAR(c[1].q.lo, 12.385, 1e-9);
  EXPECT_NEAR(c[1].q.hi, 12.395, 1e-9);
  EXPECT_EQ(c[2].q.dim, Dimension::kTime);
  EXPECT_NEAR(c[2].q.lo, 41.35e6, 1e-3);
  EXPECT_NEAR(c[2].q.hi, 41.45e6, 1e-3);
  EXPECT_NEAR(c[3].q.value, 41404700, 1e-3);  // thousands separator, micro sign
  EXPECT_EQ(c[4].q.dim, Dimension::kBytes);
  EXPECT_NEAR(c[4].q.value, 1.5 * 1073741824.0, 1);
  EXPECT_EQ(c[5].q.dim, Dimension::kRatio);
  EXPECT_EQ(c[6].q.dim, Dimension::kBandwidth);
  EXPECT_EQ(c[7].q.dim, Dimension::kCount);
  EXPECT_DOUBLE_EQ(c[7].q.value, 15476);
}

TEST(Claims, NumbersInNamesAreNotClaims) {
  const std::vector<Claim> c = ExtractClaims(
      "layer_7 on sm_90 (H100), ProfilerStep#12, nvjet_sm90_tst_64x8 and v1.2 ran 3 times; "
      "rank 3 took 250 us.");
  ASSERT_EQ(c.size(), 1u) << c[0].text;
  EXPECT_EQ(c[0].text, "250 us");
  EXPECT_DOUBLE_EQ(c[0].q.value, 250e3);
}

TEST(Claims, HedgesWidenToFivePercent) {
  const std::vector<Claim> c = ExtractClaims("it would save about 233 ms, or ~230 ms");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NEAR(c[0].q.lo, 233e6 * 0.95, 1);
  EXPECT_NEAR(c[1].q.hi, 230e6 * 1.05, 1);
}

// A report of one fact: 12.3945% and 12.3849% read as "12.4%" and "12.39%".
std::vector<ReportNumber> OneFact(double pct) {
  const std::string json =
      R"({"sections":[{"key":"kernel_summary","input":0,"facts":{"gemm_share_pct":)" +
      std::to_string(pct) + R"(,"kernel_time_ns":41404725}}],"findings":[]})";
  return ValueOrDie(ReportNumbers(json, "r.json"));
}

Verdict VerdictOf(const std::string& text, const std::vector<ReportNumber>& numbers) {
  const std::vector<ClaimCheck> checks = CheckClaims(ExtractClaims(text), numbers);
  EXPECT_EQ(checks.size(), 1u) << text;
  return checks.empty() ? Verdict::kUnsupported : checks[0].verdict;
}

TEST(Claims, RoundingDecidesBetweenSupportedAndContradicted) {
  const auto a = OneFact(12.3945);
  EXPECT_EQ(VerdictOf("The GEMM share is 12.4%.", a), Verdict::kSupported);
  EXPECT_EQ(VerdictOf("The GEMM share is 12.39%.", a), Verdict::kSupported);
  EXPECT_EQ(VerdictOf("The GEMM share is 12%.", a), Verdict::kSupported);
  const auto b = OneFact(12.3849);
  EXPECT_EQ(VerdictOf("The GEMM share is 12.4%.", b), Verdict::kSupported);
  EXPECT_EQ(VerdictOf("The GEMM share is 12.39%.", b), Verdict::kContradicted);
  EXPECT_EQ(VerdictOf("The GEMM share is 13.2%.", b), Verdict::kContradicted);
  // Units: ms and µs are not the same claim.
  EXPECT_EQ(VerdictOf("Kernel time was 41.4 ms.", a), Verdict::kSupported);
  EXPECT_EQ(VerdictOf("Kernel time was 41404.7 us.", a), Verdict::kSupported);
  EXPECT_EQ(VerdictOf("Kernel time was 41.4 us.", a), Verdict::kContradicted);
  // About nothing the report holds: unsupported, with the closest number of its dimension.
  const std::vector<ClaimCheck> free =
      CheckClaims(ExtractClaims("The allocator reserved 7 GiB."), a);
  ASSERT_EQ(free.size(), 1u);
  EXPECT_EQ(free[0].verdict, Verdict::kUnsupported);
  EXPECT_EQ(free[0].closest, nullptr);  // no bytes in this report
}

TEST(Claims, NotAReportIsAClearError) {
  StatusOr<std::vector<ReportNumber>> r = ReportNumbers("{\"a\": 1}", "x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("x.json: not a report in JSON"), std::string::npos);
  EXPECT_FALSE(ReportNumbers("not json", "x.json").ok());
  EXPECT_FALSE(QueryResultNumbers("[1,2]", "q.json").ok());
}

// The whole command on the shipped sample's report: a text with planted wrong numbers.
TEST(Claims, PlantedWrongNumbersAreContradictedOnTheShippedSample) {
  const std::string dir = testing::MakeTempDir();
  const std::string report = dir + "/llama.json";
  const auto analyze = testing::RunSightline(
      std::string("analyze '") + SIGHTLINE_SOURCE_DIR +
      "/examples/samples/llama_decode_h100.nsys.sqlite' --format json -o " + report);
  ASSERT_EQ(analyze.exit_code, 0) << analyze.err;
  const std::string right = dir + "/right.txt";
  const std::string wrong = dir + "/wrong.txt";
  ASSERT_TRUE(
      WriteFileAtomically(right,
                          "The GPU ran 15,476 kernels for 41.4 ms of kernel time. The top "
                          "kernel nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT takes 12.0% of kernel "
                          "time, 4.98 ms over 1,088 instances.\n")
          .ok());
  ASSERT_TRUE(
      WriteFileAtomically(wrong,
                          "The GPU ran 15,476 kernels for 41.4 ms of kernel time. The top "
                          "kernel nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT takes 15.0% of kernel "
                          "time, 4.98 us over 1,088 instances.\n")
          .ok());
  const auto ok = testing::RunSightline("check-claims " + report + " " + right);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("5 claims: 5 supported, 0 contradicted, 0 unsupported"), std::string::npos)
      << ok.out;
  const auto bad = testing::RunSightline("check-claims " + report + " " + wrong);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("\"15.0%\" contradicted; closest percent: section kernel_summary (input "
                         "0), table kernels, row 0 (nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT), "
                         "column time_pct = 12.04%"),
            std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find("\"4.98 us\" contradicted"), std::string::npos) << bad.out;
  const auto usage = testing::RunSightline("check-claims " + right + " " + right);
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace sightline
