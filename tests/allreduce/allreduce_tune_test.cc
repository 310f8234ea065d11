// The all-reduce tuner and the generated header: the header compiles on its own (C++17, no
// warnings) and its constexpr SelectStrategy returns the measured best in each cell, the nearest
// cell between grid points, and NCCL outside the grid, checked by static_asserts that the system
// compiler evaluates.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "allreduce/lut_codegen.h"
#include "allreduce/lut_tune.h"
#include "importers/allreduce_sweep/sweep_csv.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

const std::vector<int64_t> kHidden = {128, 512, 2048, 8192};
const std::vector<int64_t> kTokens = {1, 4, 16, 64, 256};

// The designed winner of cell (h, t) for world size 2, fusion none; fused and world size 4 shift
// the pattern so that tables differ.
ArStrategy Designed(size_t h, size_t t, int shift) {
  return kArStrategies[(h * 2 + t + static_cast<size_t>(shift)) % kNumArStrategies];
}

// Times: the winner 10 us x size factor, the others 20% and 50% slower; the runner-up is only 2%
// slower in cells where h == t (close calls).
std::string SyntheticCsv(ArMode mode) {
  std::string csv = std::string(kSweepCsvHeader) + "\n";
  struct Table {
    int world;
    ArFusion fusion;
    int shift;
  };
  for (const Table& tab : {Table{2, ArFusion::kNone, 0}, Table{2, ArFusion::kResidualRmsNorm, 1},
                           Table{4, ArFusion::kNone, 2}}) {
    for (size_t h = 0; h < kHidden.size(); ++h) {
      for (size_t t = 0; t < kTokens.size(); ++t) {
        const ArStrategy best = Designed(h, t, tab.shift);
        int rank = 1;
        for (ArStrategy s : kArStrategies) {
          const double base = 10.0 * static_cast<double>(h + t + 1);
          const double time = s == best ? base : base * (rank++ == 1 ? (h == t ? 1.02 : 1.2) : 1.5);
          csv += fmt::format("{},bf16,{},{},{},{},{},{},{},1,1\n", tab.world,
                             kTokens[t] * kHidden[h] * 2, kTokens[t], kHidden[h], ArStrategyName(s),
                             ArFusionName(tab.fusion), ArModeName(mode), time);
        }
      }
    }
  }
  return csv;
}

std::vector<SweepRow> SyntheticRows() {
  StatusOr<std::vector<SweepRow>> graph = ParseSweepCsv(SyntheticCsv(ArMode::kGraph), "g.csv");
  StatusOr<std::vector<SweepRow>> eager = ParseSweepCsv(SyntheticCsv(ArMode::kEager), "e.csv");
  EXPECT_TRUE(graph.ok() && eager.ok());
  std::vector<SweepRow> rows = *graph;
  rows.insert(rows.end(), eager->begin(), eager->end());
  return rows;
}

TEST(AllReduceTune, TablesHoldTheBestAndReportLosses) {
  StatusOr<TuneResult> r = TuneAllReduce(SyntheticRows(), TuneOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tables.size(), 3u);
  const LutTable& t = r->tables[0];
  EXPECT_EQ(t.world_size, 2);
  EXPECT_EQ(t.fusion, ArFusion::kNone);
  for (size_t h = 0; h < kHidden.size(); ++h) {
    for (size_t k = 0; k < kTokens.size(); ++k) {
      EXPECT_EQ(t.Select(kHidden[h], kTokens[k]), Designed(h, k, 0)) << h << "," << k;
    }
  }
  const LutCheck& c = r->checks[0];
  EXPECT_EQ(c.cells_measured, 20);
  EXPECT_EQ(c.table.cells, 20);
  EXPECT_DOUBLE_EQ(c.table.worst_pct, 0);
  EXPECT_EQ(c.close_calls, 4);  // h == t for h, t < 4
  // NCCL, first in enum order, is the runner-up wherever it is not the best: 20% (2% in close
  // calls) slower.
  EXPECT_NEAR(c.nccl_only.worst_pct, 20, 1e-9);
  // The coarse check (hidden 128, 2048, 8192 x tokens 1, 16, 256) holds out 11 cells; with a
  // checkerboard-like pattern nearest-cell lookup does lose there.
  EXPECT_TRUE(c.coarse_possible);
  EXPECT_EQ(c.coarse.cells + c.coarse.unmeasured_choice, 20 - 9);
  EXPECT_GT(c.coarse.worst_pct, 0);
  const std::string summary = RenderTuneSummary(*r);
  EXPECT_NE(summary.find("residual_rmsnorm"), std::string::npos) << summary;
  EXPECT_NE(summary.find("128..8192 (4) x 1..256 (5)"), std::string::npos) << summary;
}

TEST(AllReduceTune, MissingModeOrDtypeIsAClearError) {
  StatusOr<std::vector<SweepRow>> eager = ParseSweepCsv(SyntheticCsv(ArMode::kEager), "e.csv");
  ASSERT_TRUE(eager.ok());
  StatusOr<TuneResult> r = TuneAllReduce(*eager, TuneOptions{});  // graph by default
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bf16 eager"), std::string::npos) << r.status().message();
  TuneOptions fp16;
  fp16.mode = ArMode::kEager;
  fp16.dtype = "fp16";
  EXPECT_FALSE(TuneAllReduce(*eager, fp16).ok());
}

bool HaveCompiler() { return std::system("c++ --version >/dev/null 2>&1") == 0; }

// Compiles `program` (which includes lut.h from `dir`) with -fsyntax-only; true on success.
bool Compiles(const std::string& dir, const std::string& program, std::string* errors) {
  const std::string src = dir + "/check.cc", log = dir + "/compile.log";
  std::ofstream(src) << program;
  const std::string cmd = "c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I'" +
                          dir + "' '" + src + "' >'" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  *errors = testing::Slurp(log);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string Enumerator(ArStrategy s) {
  switch (s) {
    case ArStrategy::kNccl:
      return "Strategy::kNccl";
    case ArStrategy::kOneShot:
      return "Strategy::kOneShot";
    case ArStrategy::kTwoShot:
      return "Strategy::kTwoShot";
    case ArStrategy::kLamport:
      return "Strategy::kLamport";
  }
  return "";
}

std::string Assert(int world, const char* fusion, int64_t hidden, int64_t tokens, ArStrategy s) {
  return fmt::format("static_assert(SelectStrategy({}, Fusion::{}, {}, {}) == {});\n", world,
                     fusion, hidden, tokens, Enumerator(s));
}

// The header names its sources in a comment wrapped at 100 columns (the committed table is read
// and formatted like the rest of the source); every name is kept, paths dropped.
TEST(AllReduceTune, GeneratedHeaderWrapsItsSourcesAt100Columns) {
  StatusOr<TuneResult> r = TuneAllReduce(SyntheticRows(), TuneOptions{});
  ASSERT_TRUE(r.ok());
  std::vector<std::string> sources;
  for (int i = 0; i < 6; ++i)
    sources.push_back(fmt::format("/data/grid_w{}_quant_h200_s20.csv", i));
  sources.push_back(std::string(120, 'x') + ".csv");  // longer than a line: a line of its own
  const std::string header = GenerateLutHeader(*r, sources);
  std::istringstream lines(header);
  std::string line;
  int source_lines = 0;
  while (std::getline(lines, line)) {
    if (line.find("grid_w") != std::string::npos) {
      ++source_lines;
      EXPECT_LE(line.size(), 100u) << line;
    }
  }
  EXPECT_GE(source_lines, 2);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NE(header.find(fmt::format("grid_w{}_quant_h200_s20.csv", i)), std::string::npos);
  }
  EXPECT_NE(header.find("// " + std::string(120, 'x') + ".csv\n"), std::string::npos);
  EXPECT_EQ(header.find("/data/"), std::string::npos);
}

TEST(AllReduceTune, GeneratedHeaderCompilesAndSelects) {
  if (!HaveCompiler()) GTEST_SKIP() << "no system C++ compiler (c++) to compile the header";
  StatusOr<TuneResult> r = TuneAllReduce(SyntheticRows(), TuneOptions{});
  ASSERT_TRUE(r.ok());
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/lut.h") << GenerateLutHeader(*r, {"/tmp/sweep.csv"});

  std::string checks;
  // Every measured cell: the designed winner.
  for (size_t h = 0; h < kHidden.size(); ++h) {
    for (size_t t = 0; t < kTokens.size(); ++t) {
      checks += Assert(2, "kNone", kHidden[h], kTokens[t], Designed(h, t, 0));
      checks += Assert(2, "kResidualRmsNorm", kHidden[h], kTokens[t], Designed(h, t, 1));
      checks += Assert(4, "kNone", kHidden[h], kTokens[t], Designed(h, t, 2));
    }
  }
  // Between grid points: hidden 256 = sqrt(128 * 512) goes down, 257 up; tokens 2 = sqrt(1 * 4)
  // goes down, 3 up; 100 lies between 64 and 256 (geometric mean 128) and goes down.
  checks += Assert(2, "kNone", 256, 1, Designed(0, 0, 0));
  checks += Assert(2, "kNone", 257, 1, Designed(1, 0, 0));
  checks += Assert(2, "kNone", 128, 2, Designed(0, 0, 0));
  checks += Assert(2, "kNone", 128, 3, Designed(0, 1, 0));
  checks += Assert(2, "kNone", 5000, 100, Designed(3, 3, 0));
  checks += Assert(2, "kNone", 4096, 129, Designed(2, 4, 0));
  // Outside the grid, or a world size / fusion that was not measured: NCCL.
  for (auto [hidden, tokens] : std::vector<std::pair<int, int>>{
           {64, 1}, {127, 4}, {8193, 4}, {16384, 16}, {512, 0}, {512, 257}, {0, 0}, {-1, -5}}) {
    checks += Assert(2, "kNone", hidden, tokens, ArStrategy::kNccl);
  }
  checks += Assert(8, "kNone", 128, 4, ArStrategy::kNccl);
  checks += Assert(4, "kResidualRmsNorm", 128, 4, ArStrategy::kNccl);
  // The measured tables say otherwise in that cell, so the two checks above test the fallback.
  ASSERT_NE(Designed(0, 1, 0), ArStrategy::kNccl);
  ASSERT_NE(Designed(0, 1, 1), ArStrategy::kNccl);

  const std::string program = "#include \"lut.h\"\nusing namespace sightline::allreduce;\n" +
                              checks + "int main() { return 0; }\n";
  std::string errors;
  EXPECT_TRUE(Compiles(dir, program, &errors)) << errors;
  // The check can fail: a wrong expectation must not compile.
  const ArStrategy wrong =
      Designed(0, 1, 0) == ArStrategy::kOneShot ? ArStrategy::kTwoShot : ArStrategy::kOneShot;
  const std::string negative = "#include \"lut.h\"\nusing namespace sightline::allreduce;\n" +
                               Assert(2, "kNone", 128, 4, wrong) + "int main() { return 0; }\n";
  EXPECT_FALSE(Compiles(dir, negative, &errors));
  std::filesystem::remove_all(dir);
}

// The quantizing fusions get their own tables, enumerators and static_asserts in the header, and
// the summary's fusion column widens to their names.
TEST(AllReduceTune, QuantizingFusionsGetTheirOwnTables) {
  if (!HaveCompiler()) GTEST_SKIP() << "no system C++ compiler (c++) to compile the header";
  std::string csv = std::string(kSweepCsvHeader) + "\n";
  const ArFusion fusions[] = {ArFusion::kResidualRmsNormFp8, ArFusion::kResidualRmsNormFp8PerToken,
                              ArFusion::kResidualRmsNormNvfp4};
  for (int f = 0; f < 3; ++f) {
    for (size_t h = 0; h < kHidden.size(); ++h) {
      for (size_t t = 0; t < kTokens.size(); ++t) {
        const ArStrategy best = Designed(h, t, f + 1);
        for (ArStrategy s : kArStrategies) {
          csv += fmt::format("2,bf16,{},{},{},{},{},graph,{},1,1\n", kTokens[t] * kHidden[h] * 2,
                             kTokens[t], kHidden[h], ArStrategyName(s), ArFusionName(fusions[f]),
                             s == best ? 10.0 : 13.0);
        }
      }
    }
  }
  StatusOr<std::vector<SweepRow>> rows = ParseSweepCsv(csv, "q.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  StatusOr<TuneResult> r = TuneAllReduce(*rows, TuneOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tables.size(), 3u);
  for (int f = 0; f < 3; ++f) EXPECT_EQ(r->tables[f].fusion, fusions[f]);
  const std::string summary = RenderTuneSummary(*r);
  EXPECT_NE(summary.find("    2  residual_rmsnorm_fp8_per_token  128..8192"), std::string::npos)
      << summary;
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/lut.h") << GenerateLutHeader(*r, {"q.csv"});
  std::string checks;
  const char* names[] = {"kResidualRmsNormFp8", "kResidualRmsNormFp8PerToken",
                         "kResidualRmsNormNvfp4"};
  for (int f = 0; f < 3; ++f) {
    for (size_t h = 0; h < kHidden.size(); ++h) {
      for (size_t t = 0; t < kTokens.size(); ++t) {
        checks += Assert(2, names[f], kHidden[h], kTokens[t], Designed(h, t, f + 1));
      }
    }
  }
  checks += Assert(2, "kResidualRmsNorm", 128, 1, ArStrategy::kNccl);  // no table: NCCL
  const std::string program = "#include \"lut.h\"\nusing namespace sightline::allreduce;\n" +
                              checks + "int main() { return 0; }\n";
  std::string errors;
  EXPECT_TRUE(Compiles(dir, program, &errors)) << errors;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sightline
