// The Nsight Compute CSV reader and analysis: CSV quoting, real exports recorded on an H100
// (tests/data/ncu: a PyTorch program under `ncu --set full`, details and raw pages, default and
// base units, ncu's stdout with its ==PROF== lines; 64 launches of tests/kernel/gpu_validation's
// kernels with LaunchStats + Occupancy only), verdict rules on hand-made exports, missing
// sections, side-by-side comparison, and the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "base/csv.h"
#include "importers/ncu/ncu_csv.h"
#include "kernel/ncu_analysis.h"
#include "kernel/ncu_report.h"
#include "kernel/occupancy.h"
#include "reporters/reporter.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/status.h"

namespace sightline {
namespace {

std::string Data(const std::string& name) {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/ncu/" + name;
}

NcuExport Read(const std::string& name) { return testing::ValueOrDie(ReadNcuCsv(Data(name))); }

std::vector<NcuKernelAnalysis> AnalyzeAll(const NcuInput& in) {
  std::vector<NcuKernelAnalysis> out;
  for (const NcuKernel& k : in.kernels) out.push_back(AnalyzeNcuKernel(k));
  return out;
}

// A details-page export written by hand: one kernel per call of Kernel().
class DetailsCsv {
 public:
  DetailsCsv& Kernel(int id, const std::string& name, const std::string& block = "(256, 1, 1)",
                     const std::string& grid = "(1024, 1, 1)") {
    id_ = id;
    name_ = name;
    block_ = block;
    grid_ = grid;
    return *this;
  }
  DetailsCsv& Metric(const std::string& section, const std::string& metric, const std::string& unit,
                     const std::string& value) {
    text_ += Row({section, metric, unit, value});
    return *this;
  }
  DetailsCsv& Rule(const std::string& section, const std::string& rule, const std::string& type,
                   const std::string& text, const std::string& speedup) {
    text_ += Row({section, "", "", "", rule, type, text, speedup.empty() ? "" : "global", speedup});
    return *this;
  }
  // Speed of light, launch statistics and occupancy of a typical kernel.
  DetailsCsv& Sol(double sm_pct, double mem_pct, double duration_us) {
    const char* s = "GPU Speed Of Light Throughput";
    Metric(s, "Duration", "us", std::to_string(duration_us));
    Metric(s, "Compute (SM) Throughput", "%", std::to_string(sm_pct));
    Metric(s, "Memory Throughput", "%", std::to_string(mem_pct));
    return Metric(s, "DRAM Throughput", "%", std::to_string(mem_pct));
  }
  DetailsCsv& Launch(int block, int grid, int regs, int sms = 132) {
    const char* s = "Launch Statistics";
    Metric(s, "Block Size", "", std::to_string(block));
    Metric(s, "Grid Size", "", std::to_string(grid));
    Metric(s, "Registers Per Thread", "register/thread", std::to_string(regs));
    Metric(s, "Static Shared Memory Per Block", "byte/block", "0");
    Metric(s, "Dynamic Shared Memory Per Block", "byte/block", "0");
    Metric(s, "Driver Shared Memory Per Block", "Kbyte/block", "1.02");
    Metric(s, "Shared Memory Configuration Size", "Kbyte", "32.77");
    return Metric(s, "# SMs", "SM", std::to_string(sms));
  }
  DetailsCsv& Occupancy(int lim_regs, int lim_smem, int lim_warps, int lim_sm, double theo,
                        double achieved) {
    const char* s = "Occupancy";
    Metric(s, "Block Limit Registers", "block", std::to_string(lim_regs));
    Metric(s, "Block Limit Shared Mem", "block", std::to_string(lim_smem));
    Metric(s, "Block Limit Warps", "block", std::to_string(lim_warps));
    Metric(s, "Block Limit SM", "block", std::to_string(lim_sm));
    Metric(s, "Theoretical Occupancy", "%", std::to_string(theo));
    return Metric(s, "Achieved Occupancy", "%", std::to_string(achieved));
  }
  std::string Text() const {
    return "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\","
           "\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\","
           "\"Metric Name\",\"Metric Unit\",\"Metric Value\",\"Rule Name\",\"Rule Type\","
           "\"Rule Description\",\"Estimated Speedup Type\",\"Estimated Speedup\"\n" +
           text_;
  }

 private:
  std::string Row(const std::vector<std::string>& tail) const {
    std::vector<std::string> cells = {
        std::to_string(id_), "1", "app", "host", name_, "1", "7", block_, grid_, "0", "9.0"};
    cells.insert(cells.end(), tail.begin(), tail.end());
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string c = cells[i];
      for (size_t at = c.find('"'); at != std::string::npos; at = c.find('"', at + 2)) {
        c.insert(at, "\"");
      }
      line += (i ? ",\"" : "\"") + c + "\"";
    }
    return line + "\n";
  }
  int id_ = 0;
  std::string name_, block_, grid_, text_;
};

TEST(Csv, QuotingAndLineEnds) {
  StatusOr<std::vector<CsvRow>> rows =
      ParseCsv("a,\"b,c\",\"say \"\"hi\"\"\"\r\n\"two\nlines\",,x\nlast");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0], (CsvRow{"a", "b,c", "say \"hi\""}));
  EXPECT_EQ((*rows)[1], (CsvRow{"two\nlines", "", "x"}));
  EXPECT_EQ((*rows)[2], (CsvRow{"last"}));
  StatusOr<std::vector<CsvRow>> bad = ParseCsv("a,b\n\"open,\nx");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos);
}

TEST(NcuCsv, UnitsAndNumbers) {
  EXPECT_EQ(NcuNumber("17,207"), 17207);
  EXPECT_TRUE(std::isnan(NcuNumber("n/a")));
  EXPECT_TRUE(std::isnan(NcuNumber("CachePreferNone")));
  EXPECT_EQ(NcuUnitScale("us"), 1e3);
  EXPECT_EQ(NcuUnitScale("usecond"), 1e3);
  EXPECT_EQ(NcuUnitScale("msecond"), 1e6);
  EXPECT_EQ(NcuUnitScale("Kbyte"), 1e3);
  EXPECT_EQ(NcuUnitScale("Kbyte/block"), 1e3);
  EXPECT_EQ(NcuUnitScale("Tbyte/s"), 1e12);
  EXPECT_EQ(NcuUnitScale("Gbyte/second"), 1e9);
  EXPECT_EQ(NcuUnitScale("%"), 1);
  EXPECT_EQ(NcuUnitScale("register/thread"), 1);
}

TEST(NcuCsv, NotAnExportIsAClearError) {
  for (const auto& [text, words] : std::vector<std::pair<std::string, std::string>>{
           {"hello\nworld\n", "not an Nsight Compute CSV export"},
           {"==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - no permission\n",
            "ERR_NVGPUCTRPERM"},
           {"==PROF== Connected\n==PROF== Disconnected\n", "printed no table"},
           {"\"ID\",\"Process ID\"\n\"0\",\"1\"\n", "Kernel Name"}}) {
    StatusOr<NcuExport> e = ParseNcuCsv(text, "x.csv");
    ASSERT_FALSE(e.ok()) << text;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(e.status().message().find("x.csv"), std::string::npos);
    EXPECT_NE(e.status().message().find(words), std::string::npos) << e.status().message();
  }
}

// Found by fuzz_ncu_csv (tests/data/fuzz_regressions): an ID that is not a number was cast from
// NaN (undefined behaviour); it is now unknown (-1) and the row's metric is kept.
TEST(NcuCsv, IdThatIsNotANumberIsUnknown) {
  const std::string text =
      testing::Slurp(std::string(SIGHTLINE_SOURCE_DIR) +
                     "/tests/data/fuzz_regressions/ncu-csv/id_not_a_number.csv");
  ASSERT_FALSE(text.empty());
  StatusOr<NcuExport> e = ParseNcuCsv(text, "x.csv");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->kernels.size(), 1u);
  EXPECT_EQ(e->kernels[0].id, -1);
  EXPECT_EQ(e->kernels[0].name, "k");
  ASSERT_EQ(e->kernels[0].metrics.size(), 1u);
  EXPECT_EQ(e->kernels[0].metrics[0].value, "1");
  StatusOr<NcuExport> ok =
      ParseNcuCsv("\"ID\",\"Kernel Name\",\"Metric Name\"\n\"12\",\"k\",\"Duration\"\n", "y.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->kernels[0].id, 12);
}

// Found by fuzz_ncu_csv: a size of 1e300 Kbyte was rounded to an integer that overflowed. Counts
// and sizes that no real kernel has (negative, infinite, beyond 2^53) are now unknown (-1).
TEST(NcuCsv, AbsurdCountsAndSizesAreUnknown) {
  const std::string text = testing::Slurp(std::string(SIGHTLINE_SOURCE_DIR) +
                                          "/tests/data/fuzz_regressions/ncu-csv/absurd_sizes.csv");
  StatusOr<NcuExport> e = ParseNcuCsv(text, "x.csv");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->kernels.size(), 1u);
  const NcuKernelAnalysis a = AnalyzeNcuKernel(e->kernels[0]);
  EXPECT_EQ(a.smem_config_bytes, -1);
  EXPECT_EQ(a.block_threads, -1);
  EXPECT_EQ(a.registers, -1);
  EXPECT_EQ(a.static_smem_bytes, -1);
  StatusOr<NcuExport> ok = ParseNcuCsv(
      "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric "
      "Value\"\n"
      "\"0\",\"k\",\"Launch Statistics\",\"Shared Memory Configuration Size\",\"Kbyte\","
      "\"233.47\"\n"
      "\"0\",\"k\",\"Launch Statistics\",\"Block Size\",\"\",\"256\"\n",
      "y.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const NcuKernelAnalysis b = AnalyzeNcuKernel(ok->kernels[0]);
  EXPECT_EQ(b.smem_config_bytes, 228 * 1024);
  EXPECT_EQ(b.block_threads, 256);
}

TEST(NcuCsv, RealDetailsExportFromH100) {
  const NcuExport e = Read("h100_torch_full_details.csv.gz");
  EXPECT_EQ(e.page, NcuPage::kDetails);
  ASSERT_EQ(e.kernels.size(), 14u);
  const NcuKernel& gemm = e.kernels[3];
  EXPECT_EQ(gemm.short_name, "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT");
  EXPECT_EQ(gemm.block_size, "(384, 1, 1)");
  EXPECT_EQ(gemm.cc, "9.0");
  // "<unnamed>" namespaces do not confuse the short name.
  EXPECT_EQ(e.kernels[6].short_name, "cunn_SoftMaxForwardReg");
  EXPECT_GT(gemm.rules.size(), 5u);
  const NcuKernelAnalysis a = AnalyzeNcuKernel(gemm);
  EXPECT_DOUBLE_EQ(a.duration_ns, 211420);
  EXPECT_DOUBLE_EQ(a.sm_throughput_pct, 90.31);
  EXPECT_EQ(a.bound, "compute");
  EXPECT_EQ(a.registers, 168);
  EXPECT_EQ(a.limit_registers, 1);
  EXPECT_EQ(a.limit_shared_mem, 1);
  EXPECT_EQ(a.limit_warps, 5);
  EXPECT_EQ(a.limit_sm, 32);
  EXPECT_EQ(a.smem_config_bytes, 228 * 1024);
  EXPECT_DOUBLE_EQ(a.theoretical_occupancy_pct, 18.75);
  EXPECT_NEAR(a.dram_bandwidth_gbps, 845.5, 0.5);
  ASSERT_FALSE(a.rules.empty());
  EXPECT_EQ(a.rules[0].type, "OPT");
  EXPECT_NEAR(a.rules[0].speedup_pct, 20.55, 1e-9);  // the largest estimated speedup first
}

// The calculator reproduces Nsight Compute's block limits and theoretical occupancy for every
// kernel of the PyTorch program (cuBLAS GEMM, elementwise, softmax, layer norm, reductions,
// gather, CUB scan), from the details page in ncu's default units and in base units.
TEST(NcuCsv, CalculatorMatchesNcuOnRealKernels) {
  for (const char* file :
       {"h100_torch_full_details.csv.gz", "h100_torch_full_details_base_units.csv.gz",
        "h100_torch_full_raw.csv.gz", "h100_torch_stdout_details.csv.gz"}) {
    const NcuExport e = Read(file);
    int agree = 0;
    for (const NcuKernel& k : e.kernels) {
      const NcuKernelAnalysis a = AnalyzeNcuKernel(k);
      EXPECT_TRUE(a.occupancy_check.checked) << file << " " << k.id;
      EXPECT_TRUE(a.occupancy_check.agrees)
          << file << " " << k.id << ": " << a.occupancy_check.detail;
      agree += a.occupancy_check.agrees;
    }
    EXPECT_EQ(agree, static_cast<int>(e.kernels.size())) << file;
  }
}

// Launches of tests/kernel/gpu_validation's kernels (registers 14..211, block sizes 1..1024,
// dynamic shared memory up to 227 KiB), two runs: 64 (seed 2) and 160 (seed 11), from ncu's stdout
// (the program's own output comes first). ncu's block limits and theoretical occupancy must be the
// calculator's, given ncu's carveout.
struct LaunchRun {
  const char* raw;
  const char* plan;
  int launches;
  int no_preference;           // launches without a carveout preference
  int driver_carveout_agrees;  // of those, where the driver picked the carveout we estimate
};

class ValidationLaunches : public ::testing::TestWithParam<LaunchRun> {};

TEST_P(ValidationLaunches, CalculatorMatchesNcu) {
  const LaunchRun run = GetParam();
  const NcuExport e = Read(run.raw);
  EXPECT_EQ(e.page, NcuPage::kRaw);
  EXPECT_GT(e.lines_skipped, 10);
  ASSERT_EQ(static_cast<int>(e.kernels.size()), run.launches);
  int agree = 0;
  for (const NcuKernel& k : e.kernels) {
    const NcuKernelAnalysis a = AnalyzeNcuKernel(k);
    EXPECT_TRUE(a.occupancy_check.agrees) << k.id << ": " << a.occupancy_check.detail;
    agree += a.occupancy_check.agrees;
  }
  EXPECT_EQ(agree, run.launches);
}

// Which carveout the driver picked, against the calculator's estimate when none is given (the
// launches with a carveout preference are left out: there the application chose).
TEST_P(ValidationLaunches, DriverCarveoutEstimate) {
  const LaunchRun run = GetParam();
  const NcuExport e = Read(run.raw);
  StatusOr<ResolvedGpu> gpu = ResolveGpu("sm_90");
  std::ifstream plan(Data(run.plan));
  std::string line;
  std::getline(plan, line);
  int total = 0, agree = 0;
  for (const NcuKernel& k : e.kernels) {
    ASSERT_TRUE(std::getline(plan, line));
    StatusOr<std::vector<CsvRow>> row = ParseCsv(line);
    if ((*row)[0][6] != "-1") continue;  // carveout_pct
    const NcuKernelAnalysis a = AnalyzeNcuKernel(k);
    OccupancyInput in{static_cast<int>(a.block_threads), static_cast<int>(a.registers),
                      a.static_smem_bytes, a.dynamic_smem_bytes, -1};
    StatusOr<OccupancyResult> r = ComputeOccupancy(gpu->arch, in);
    ASSERT_TRUE(r.ok());
    ++total;
    agree += r->smem_config_bytes == a.smem_config_bytes;
  }
  EXPECT_EQ(total, run.no_preference);
  EXPECT_EQ(agree, run.driver_carveout_agrees);
}

// Seed 2 is the run the estimate was fitted on; seed 11 was recorded afterwards to test it.
INSTANTIATE_TEST_SUITE_P(
    H100, ValidationLaunches,
    ::testing::Values(LaunchRun{"h100_occupancy_launches_seed2_raw.csv.gz",
                                "h100_occupancy_launches_seed2_plan.csv", 64, 61, 61},
                      LaunchRun{"h100_occupancy_launches_seed11_raw.csv.gz",
                                "h100_occupancy_launches_seed11_plan.csv", 160, 146, 143}));

TEST(NcuCsv, RawPageStallsAndMergeWithDetails) {
  std::vector<NcuExport> exports;
  exports.push_back(Read("h100_torch_full_details.csv.gz"));
  exports.push_back(Read("h100_torch_full_raw.csv.gz"));
  const std::vector<NcuInput> inputs = GroupNcuExports(std::move(exports));
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].pages, "details+raw");
  const std::vector<NcuKernelAnalysis> ks = AnalyzeAll(inputs[0]);
  const NcuKernelAnalysis& copy = ks[5];  // unrolled_elementwise_kernel (a dtype cast)
  EXPECT_EQ(copy.bound, "latency");
  ASSERT_FALSE(copy.stalls.empty());
  EXPECT_EQ(copy.stalls[0].reason, "long_scoreboard");
  EXPECT_GT(copy.stalls[0].share_pct, 50);
  EXPECT_FALSE(copy.stalls_are_samples);
  double total = 0;
  for (const NcuStall& s : copy.stalls) total += s.share_pct;
  EXPECT_NEAR(total, 100, 1e-6);
  // Merged, the rules of the details page and the stalls of the raw page are both there, and
  // nothing is reported missing.
  EXPECT_FALSE(copy.rules.empty());
  EXPECT_TRUE(MissingNcuSections(ks).empty());
}

TEST(NcuCsv, MissingSectionsAreNamedWithTheirFlags) {
  const NcuExport e = Read("h100_occupancy_launches_seed2_details.csv.gz");
  std::vector<NcuKernelAnalysis> ks;
  for (const NcuKernel& k : e.kernels) ks.push_back(AnalyzeNcuKernel(k));
  EXPECT_EQ(ks[0].bound, "");
  const std::vector<std::string> missing = MissingNcuSections(ks);
  std::string all;
  for (const std::string& m : missing) all += m + "\n";
  EXPECT_NE(all.find("--section SpeedOfLight"), std::string::npos) << all;
  EXPECT_NE(all.find("--section MemoryWorkloadAnalysis"), std::string::npos) << all;
  EXPECT_NE(all.find("--page raw"), std::string::npos) << all;
  EXPECT_EQ(all.find("--section Occupancy"), std::string::npos) << all;
}

TEST(NcuAnalysis, VerdictRules) {
  DetailsCsv csv;
  csv.Kernel(0, "void copy_kernel(float*, const float*)").Sol(20, 85, 100);
  csv.Kernel(1, "gemm_kernel").Sol(75, 30, 200);
  csv.Kernel(2, "void tiny<int>(int)").Sol(3, 8, 5);
  csv.Kernel(3, "balanced").Sol(59.9, 59.9, 5);
  StatusOr<NcuExport> e = ParseNcuCsv(csv.Text(), "t.csv");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->kernels.size(), 4u);
  EXPECT_EQ(e->kernels[2].short_name, "tiny");
  EXPECT_EQ(AnalyzeNcuKernel(e->kernels[0]).bound, "memory");
  EXPECT_EQ(AnalyzeNcuKernel(e->kernels[1]).bound, "compute");
  EXPECT_EQ(AnalyzeNcuKernel(e->kernels[2]).bound, "latency");
  EXPECT_EQ(AnalyzeNcuKernel(e->kernels[3]).bound, "latency");
  EXPECT_NE(AnalyzeNcuKernel(e->kernels[2]).bound_reason.find("neither compute"),
            std::string::npos);
}

TEST(NcuAnalysis, HintsGridTooSmallAndRegisterLimit) {
  DetailsCsv csv;
  // 64 blocks of 256 threads on 132 SMs, 96 registers: 3072 per warp, 5 warps per
  // sub-partition, 20 per SM, 2 blocks of 8 warps: 25%.
  csv.Kernel(0, "small_grid", "(256, 1, 1)", "(64, 1, 1)")
      .Sol(10, 20, 50)
      .Launch(256, 64, 96)
      .Occupancy(2, 32, 8, 32, 25, 11)
      .Rule("Occupancy", "TheoreticalOccupancy", "OPT", "limited by \"registers\", see", "50");
  StatusOr<NcuExport> e = ParseNcuCsv(csv.Text(), "t.csv");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const NcuKernelAnalysis a = AnalyzeNcuKernel(e->kernels[0]);
  EXPECT_EQ(a.bound, "latency");
  EXPECT_TRUE(a.occupancy_check.agrees) << a.occupancy_check.detail;
  std::string hints;
  for (const std::string& h : a.hints) hints += h + "\n";
  EXPECT_NE(hints.find("grid too small: 64 blocks"), std::string::npos) << hints;
  EXPECT_NE(hints.find("264 resident-block slots"), std::string::npos) << hints;
  EXPECT_NE(hints.find("68 SMs get no block"), std::string::npos) << hints;
  EXPECT_NE(hints.find("registers per thread <= 80"), std::string::npos) << hints;
  ASSERT_EQ(a.rules.size(), 1u);
  EXPECT_EQ(a.rules[0].description, "limited by \"registers\", see");
  EXPECT_DOUBLE_EQ(a.rules[0].speedup_pct, 50);
}

TEST(NcuReport, SideBySide) {
  DetailsCsv before, after;
  before.Kernel(0, "void gemm<float>(float*)").Sol(40, 30, 200);
  before.Kernel(1, "void relu(float*)").Sol(10, 90, 50);
  before.Kernel(2, "void gemm<float>(float*)").Sol(40, 30, 100);
  after.Kernel(0, "void gemm<half>(half*)").Sol(80, 30, 100);
  after.Kernel(1, "void relu(float*)").Sol(10, 90, 50);
  std::vector<NcuExport> exports;
  exports.push_back(*ParseNcuCsv(before.Text(), "before.csv"));
  exports.push_back(*ParseNcuCsv(after.Text(), "after.csv"));
  const Report r = BuildNcuReport(GroupNcuExports(std::move(exports)), {});
  ASSERT_EQ(r.inputs.size(), 2u);
  const Section& cmp = r.sections.back();
  ASSERT_EQ(cmp.key, "ncu_comparison");
  const Table& t = cmp.tables[0];
  ASSERT_EQ(t.rows.size(), 3u);  // gemm#1, relu, gemm#2
  EXPECT_EQ(std::get<std::string>(t.rows[0][0]), "gemm");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][3]), 2.0);  // speedup 200 us -> 100 us
  int bound_after = -1;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (t.columns[c].key == "bound_1") bound_after = static_cast<int>(c);
  }
  ASSERT_GE(bound_after, 0);
  EXPECT_EQ(std::get<std::string>(t.rows[0][bound_after]), "compute");
  EXPECT_NE(std::get<std::string>(cmp.facts[0].value).find("by name"), std::string::npos);
  EXPECT_EQ(std::get<std::string>(t.rows[2][0]), "gemm#2");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[2][2]));  // not in "after"
}

// Issue 34: `ncu` printed "inf%". A value ncu writes as "inf" or beyond a double is absent, and a
// ratio that overflows (1e300 us against 1e-300 us) is left out, not shown as inf.
TEST(NcuReport, NonFiniteValuesNeverReachTheReport) {
  EXPECT_TRUE(std::isnan(NcuNumber("inf")));
  EXPECT_TRUE(std::isnan(NcuNumber("-inf")));
  EXPECT_TRUE(std::isnan(NcuNumber("nan")));
  EXPECT_TRUE(std::isnan(NcuNumber("1e999")));
  const char* sol = "GPU Speed Of Light Throughput";
  DetailsCsv before, after;
  before.Kernel(0, "void k(float*)").Metric(sol, "Duration", "us", "1e300");
  before.Metric(sol, "Compute (SM) Throughput", "%", "inf");
  before.Metric(sol, "Memory Throughput", "%", "30");
  after.Kernel(0, "void k(float*)").Metric(sol, "Duration", "us", "1e-300");
  after.Metric(sol, "Compute (SM) Throughput", "%", "40");
  after.Metric(sol, "Memory Throughput", "%", "30");
  std::vector<NcuExport> exports;
  exports.push_back(*ParseNcuCsv(before.Text(), "before.csv"));
  exports.push_back(*ParseNcuCsv(after.Text(), "after.csv"));
  const Report r = BuildNcuReport(GroupNcuExports(std::move(exports)), {});
  const Table& t = r.sections.back().tables[0];
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[0][3])) << "speedup";
  for (const std::string& text : {RenderTextReport(r), RenderJsonReport(r)}) {
    EXPECT_EQ(text.find("inf"), std::string::npos) << text;
    EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  }
}

TEST(NcuCli, ReportsAndErrors) {
  testing::CliResult r =
      testing::RunSightline("ncu --format json " + Data("h100_torch_full_details.csv.gz") + " " +
                            Data("h100_torch_full_raw.csv.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"bound\": \"compute\""), std::string::npos);
  EXPECT_NE(r.out.find("\"bound\": \"latency\""), std::string::npos);
  EXPECT_NE(r.out.find("\"calculator_agreement\": \"14 of 14 kernels\""), std::string::npos);
  r = testing::RunSightline("ncu --top 2 " + Data("h100_torch_stdout_details.csv.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ncu TheoreticalOccupancy (est. speedup"), std::string::npos);
  EXPECT_NE(r.out.find("missing: warp stall reasons"), std::string::npos);
  EXPECT_NE(r.out.find("lines before the ncu table"), std::string::npos);  // a diagnostic
  r = testing::RunSightline("ncu " + Data("h100_torch_full_details.csv.gz") + " " +
                            Data("h100_torch_stdout_details.csv.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Side by side"), std::string::npos);

  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/notes.csv") << "kernel,time\nfoo,1\n";
  r = testing::RunSightline("ncu " + dir + "/notes.csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an Nsight Compute CSV export"), std::string::npos) << r.err;
  EXPECT_EQ(testing::RunSightline("ncu /nonexistent/x.csv").exit_code, 2);
  EXPECT_EQ(testing::RunSightline("ncu").exit_code, 2);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// "Active Warps Per Scheduler" is ncu's own measurement when the export has it (8.11 for the first
// kernel of this export), not achieved warps per SM / 4; only an export without it gets the
// derived value, labelled as such.
TEST(NcuAnalysis, ActiveWarpsPerSchedulerIsNcusOwn) {
  StatusOr<NcuExport> e = ReadNcuCsv(std::string(SIGHTLINE_SOURCE_DIR) +
                                     "/tests/data/ncu/h100_torch_full_details.csv.gz");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_FALSE(e->kernels.empty());
  NcuKernel k = e->kernels[0];
  const NcuKernelAnalysis a = AnalyzeNcuKernel(k);
  EXPECT_DOUBLE_EQ(a.active_warps_per_scheduler, 8.11);
  EXPECT_FALSE(a.active_warps_per_scheduler_derived);
  std::erase_if(k.metrics,
                [](const NcuMetric& m) { return m.name == "Active Warps Per Scheduler"; });
  const NcuKernelAnalysis d = AnalyzeNcuKernel(k);
  EXPECT_TRUE(d.active_warps_per_scheduler_derived);
  EXPECT_DOUBLE_EQ(d.active_warps_per_scheduler, d.achieved_warps_per_sm / 4);
}

}  // namespace
}  // namespace sightline
