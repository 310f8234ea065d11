// End-to-end checks of `sightline allreduce tune|plot|bench`: outputs written, SVGs well-formed
// and labelled, bad input exits 2 without output, bench passes its arguments through.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "allreduce/sweep_plot.h"
#include "importers/allreduce_sweep/sweep_csv.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

using testing::RunSightline;

using testing::Slurp;

// A 2 x 3 grid for graph mode, fused and not, and a size sweep, for world size 2.
std::string SmallSweep() {
  std::string csv = std::string(kSweepCsvHeader) + "\n";
  for (const char* fusion : {"none", "residual_rmsnorm"}) {
    for (int hidden : {1024, 4096}) {
      for (int tokens : {1, 16, 256}) {
        const int64_t size = int64_t{2} * hidden * tokens;
        csv += fmt::format("2,bf16,{},{},{},nccl,{},graph,{},1,1\n", size, tokens, hidden, fusion,
                           30 + size / 4000.0);
        csv += fmt::format("2,bf16,{},{},{},oneshot,{},graph,{},1,1\n", size, tokens, hidden,
                           fusion, 7 + size / 1000.0);
        csv += fmt::format("2,bf16,{},{},{},twoshot,{},graph,{},1,1\n", size, tokens, hidden,
                           fusion, 10 + size / 3000.0);
      }
    }
  }
  for (int64_t size = 1024; size <= (int64_t{1} << 26); size *= 4) {
    for (const char* s : {"nccl", "oneshot", "twoshot"}) {
      csv += fmt::format("2,bf16,{},0,0,{},none,eager,{},{},{}\n", size, s, 10 + size / 3e5,
                         size / 1e4, size / 1e4);
    }
  }
  return csv;
}

// A small well-formedness check: every tag closes in order, attributes are quoted, and '&' only
// starts an entity. Python's XML parser checks the same files too when python3 is available.
bool WellFormed(const std::string& xml, std::string* why) {
  std::vector<std::string> stack;
  size_t i = 0;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      const size_t semi = xml.find(';', i);
      if (semi == std::string::npos || semi - i > 8) {
        *why = "bare & at " + std::to_string(i);
        return false;
      }
      i = semi + 1;
      continue;
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    if (xml.compare(i, 2, "<!") == 0 || xml.compare(i, 2, "<?") == 0) {
      i = xml.find('>', i) + 1;
      continue;
    }
    const size_t end = xml.find('>', i);
    if (end == std::string::npos) {
      *why = "unclosed tag";
      return false;
    }
    std::string tag = xml.substr(i + 1, end - i - 1);
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0 || tag.find('<') != std::string::npos) {
      *why = "bad tag: " + tag;
      return false;
    }
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) {
        *why = "mismatched </" + tag.substr(1) + ">";
        return false;
      }
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
    }
    i = end + 1;
  }
  if (!stack.empty()) *why = "unclosed <" + stack.back() + ">";
  return stack.empty();
}

TEST(AllReduceCli, TuneWritesHeaderAndLossTable) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/sweep.csv") << SmallSweep();
  testing::CliResult r =
      RunSightline("allreduce tune '" + dir + "/sweep.csv' -o '" + dir + "/lut.h'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("residual_rmsnorm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("table worst/mean"), std::string::npos) << r.out;
  const std::string header = Slurp(dir + "/lut.h");
  EXPECT_NE(header.find("Strategy SelectStrategy(int world_size, Fusion fusion, int hidden_size"),
            std::string::npos);
  EXPECT_NE(header.find("enum class Strategy { kNccl, kOneShot, kTwoShot, kLamport };"),
            std::string::npos);
  EXPECT_EQ(header.find("#include"), std::string::npos);
  // Eager has only 1-D rows here: a clear error, exit 2, no header.
  r = RunSightline("allreduce tune --mode eager '" + dir + "/sweep.csv' -o '" + dir + "/e.h'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bf16 graph"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/e.h"));
  std::filesystem::remove_all(dir);
}

// The committed Lamport size sweep: tune without -o prints the cost model (a Lamport fit and the
// size-sweep check); with -o it needs 2-D rows, so exit 2 and no header.
TEST(AllReduceCli, TuneReadsLamportSizeSweep) {
  const std::string csv =
      std::string(SIGHTLINE_SOURCE_DIR) + "/docs/evidence/allreduce/sizes_w2_lamport_1.csv";
  testing::CliResult r = RunSightline("allreduce tune '" + csv + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Cost model t = a + b * bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lamport"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fastest NCCL/1sh/2sh/Lmp 0/0/0/11"), std::string::npos) << r.out;
  const std::string dir = testing::MakeTempDir();
  r = RunSightline("allreduce tune '" + csv + "' -o '" + dir + "/lut.h'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no 2-D sweep rows"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/lut.h"));
  std::filesystem::remove_all(dir);
}

TEST(AllReduceCli, BadCsvExitsTwoWithLineAndNoOutput) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/bad.csv") << std::string(kSweepCsvHeader)
                                  << "\n2,bf16,1024,0,0,nccl,none,eager,30,1,1\n"
                                     "2,bf16,1024,0,0,fourshot,none,eager,30,1,1\n";
  for (const std::string cmd : {"tune", "plot"}) {
    const std::string out = dir + "/" + cmd + ".out";
    testing::CliResult r =
        RunSightline("allreduce " + cmd + " '" + dir + "/bad.csv' -o '" + out + "'");
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find(dir + "/bad.csv:3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("fourshot"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << cmd;
  }
  testing::CliResult missing = RunSightline("allreduce tune /nonexistent/s.csv -o x.h");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/s.csv"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// The plots appear together or not at all: a write that fails (a file size limit standing in for
// a full disk) leaves no directory and no file of them; before, the first plots were left.
TEST(AllReduceCli, PlotOnAFullDiskLeavesNoneOfItsFiles) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/sweep.csv") << SmallSweep();
  const std::string out = dir + "/plots";
  const std::string cmd = "bash -c \"ulimit -f 5; exec '" + std::string(SIGHTLINE_BINARY) +
                          "' allreduce plot '" + dir + "/sweep.csv' -o '" + out + "'\" 2>'" + dir +
                          "/err' >/dev/null";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 3) << Slurp(dir + "/err");
  EXPECT_NE(Slurp(dir + "/err").find("none of the"), std::string::npos) << Slurp(dir + "/err");
  EXPECT_FALSE(std::filesystem::exists(out));
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2u);  // sweep.csv and err
}

TEST(AllReduceCli, PlotWritesWellFormedLabelledSvgs) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/sweep.csv") << SmallSweep();
  const std::string out = dir + "/plots/nested";
  testing::CliResult r = RunSightline("allreduce plot '" + dir + "/sweep.csv' -o '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Per grid (2 fusions): best + 3 time + 3 slower + 4 ratio and 4 difference maps (best custom
  // against NCCL and the 3 pairs); the size sweep: time + busbw; the index.
  std::vector<std::string> svgs;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    if (e.path().extension() == ".svg") svgs.push_back(e.path().string());
  }
  EXPECT_EQ(svgs.size(), 2u * 15 + 2);
  for (const std::string& f : svgs) {
    std::string why;
    EXPECT_TRUE(WellFormed(Slurp(f), &why)) << f << ": " << why;
  }
  const std::string best = Slurp(out + "/w2_bf16_none_graph_best.svg");
  for (const char* label : {"Fastest all-reduce strategy", "tokens", "hidden size", "one-shot",
                            "two-shot", "NCCL", "4K", "256", "world size 2"}) {
    EXPECT_NE(best.find(label), std::string::npos) << label;
  }
  const std::string time = Slurp(out + "/w2_bf16_residual_rmsnorm_graph_time_nccl.svg");
  EXPECT_NE(time.find("NCCL all-reduce time (µs)"), std::string::npos);
  EXPECT_NE(time.find(">30.5<"), std::string::npos);  // hidden 1024 x 1 token: 30 + 2048/4000
  const std::string slower = Slurp(out + "/w2_bf16_none_graph_slower_oneshot.svg");
  EXPECT_NE(slower.find("% slower"), std::string::npos);
  EXPECT_NE(slower.find(">best<"), std::string::npos);
  const std::string busbw = Slurp(out + "/w2_bf16_eager_size_busbw.svg");
  EXPECT_NE(busbw.find("bus bandwidth (GB/s)"), std::string::npos);
  EXPECT_NE(busbw.find(">64M<"), std::string::npos);
  const std::string index = Slurp(out + "/index.html");
  for (const std::string& f : svgs) {
    EXPECT_NE(index.find(std::filesystem::path(f).filename().string()), std::string::npos) << f;
  }
  // One interpreter for all files (starting python3 is slow on some machines).
  std::string cmd =
      "python3 -c 'import sys, xml.etree.ElementTree as E; [E.parse(f) for f in "
      "sys.argv[1:]]' >/dev/null 2>&1";
  for (const std::string& f : svgs) cmd += " '" + f + "'";
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") == 0) {
    EXPECT_EQ(std::system(cmd.c_str()), 0) << "python3's XML parser rejects an SVG: " << cmd;
  }
  std::filesystem::remove_all(dir);
}

// The strategy-difference maps of a grid with NCCL, one-shot and Lamport (no two-shot): the best
// custom kernel over NCCL and each measured pair, with the ratio in every cell, on the index page.
TEST(AllReduceCli, PlotDrawsStrategyDifferenceMaps) {
  const std::string dir = testing::MakeTempDir();
  std::string csv = std::string(kSweepCsvHeader) + "\n";
  // hidden 1024 x 1 token: NCCL 6, one-shot 5, Lamport 3; x 16 tokens: 8, 6, 4.
  csv +=
      "2,bf16,2048,1,1024,nccl,none,graph,6,0,0\n2,bf16,2048,1,1024,oneshot,none,graph,5,0,0\n"
      "2,bf16,2048,1,1024,lamport,none,graph,3,0,0\n";
  csv +=
      "2,bf16,32768,16,1024,nccl,none,graph,8,0,0\n2,bf16,32768,16,1024,oneshot,none,graph,6,0,0\n"
      "2,bf16,32768,16,1024,lamport,none,graph,4,0,0\n";
  std::ofstream(dir + "/l.csv") << csv;
  const std::string out = dir + "/plots";
  testing::CliResult r = RunSightline("allreduce plot '" + dir + "/l.csv' -o '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string p = out + "/w2_bf16_none_graph";
  const std::string custom = Slurp(p + "_ratio_custom_nccl.svg");
  EXPECT_NE(custom.find("Best custom kernel / NCCL"), std::string::npos);
  EXPECT_NE(custom.find(">0.50x<"), std::string::npos) << custom;  // 3 / 6
  EXPECT_NE(custom.find(">Lamport<"), std::string::npos);          // which custom kernel
  const std::string pair = Slurp(p + "_ratio_lamport_oneshot.svg");
  EXPECT_NE(pair.find("Lamport / one-shot: time ratio"), std::string::npos);
  EXPECT_NE(pair.find(">0.60x<"), std::string::npos) << pair;                          // 3 / 5
  EXPECT_NE(pair.find(">0.67x<"), std::string::npos) << pair;                          // 4 / 6
  EXPECT_NE(Slurp(p + "_ratio_oneshot_nccl.svg").find(">0.83x<"), std::string::npos);  // 5 / 6
  EXPECT_TRUE(std::filesystem::exists(p + "_ratio_lamport_nccl.svg"));
  EXPECT_FALSE(std::filesystem::exists(p + "_ratio_twoshot_nccl.svg"));  // not measured
  std::string why;
  EXPECT_TRUE(WellFormed(custom, &why)) << why;
  EXPECT_TRUE(WellFormed(pair, &why)) << why;
  const std::string index = Slurp(out + "/index.html");
  EXPECT_NE(index.find("Strategy differences"), std::string::npos);
  EXPECT_NE(index.find("w2_bf16_none_graph_ratio_lamport_oneshot.svg"), std::string::npos);
  // The same comparisons as differences in µs: Lamport - NCCL = -3 and -4, one-shot - NCCL = -1
  // and -2, Lamport - one-shot = -2 in both cells.
  const std::string diff = Slurp(p + "_diff_custom_nccl.svg");
  EXPECT_NE(diff.find("Best custom kernel - NCCL: time difference"), std::string::npos) << diff;
  EXPECT_NE(diff.find(">-3.00<"), std::string::npos) << diff;
  EXPECT_NE(diff.find(">-4.00<"), std::string::npos) << diff;
  EXPECT_NE(diff.find(">Lamport<"), std::string::npos);
  const std::string diff_pair = Slurp(p + "_diff_lamport_oneshot.svg");
  EXPECT_NE(diff_pair.find(">-2.00<"), std::string::npos) << diff_pair;
  EXPECT_NE(Slurp(p + "_diff_oneshot_nccl.svg").find(">-1.00<"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(p + "_diff_twoshot_nccl.svg"));
  EXPECT_TRUE(WellFormed(diff, &why)) << why;
  EXPECT_TRUE(WellFormed(diff_pair, &why)) << why;
  EXPECT_NE(index.find("time difference per cell"), std::string::npos);
  EXPECT_NE(index.find("w2_bf16_none_graph_diff_lamport_oneshot.svg"), std::string::npos);
  const std::string best = Slurp(p + "_best.svg");
  EXPECT_NE(best.find("Lamport"), std::string::npos);
  EXPECT_EQ(best.find("two-shot"), std::string::npos);  // the legend lists measured ones only
  std::filesystem::remove_all(dir);
}

// The quantizing fusions go through tune and plot like the others: their own tables (and
// enumerators in the header), their own maps, named after the CSV's fusion column.
TEST(AllReduceCli, QuantizingFusionsAreTunedAndPlotted) {
  const std::string dir = testing::MakeTempDir();
  std::string csv = std::string(kSweepCsvHeader) + "\n";
  for (const char* fusion :
       {"residual_rmsnorm_fp8", "residual_rmsnorm_fp8_per_token", "residual_rmsnorm_nvfp4"}) {
    for (int hidden : {4096, 8192}) {
      for (int tokens : {1, 16, 1024}) {
        const int64_t size = int64_t{2} * hidden * tokens;
        csv += fmt::format("2,bf16,{},{},{},nccl,{},graph,{},1,1\n", size, tokens, hidden, fusion,
                           12 + size / 3000.0);
        csv += fmt::format("2,bf16,{},{},{},oneshot,{},graph,{},1,1\n", size, tokens, hidden,
                           fusion, 6 + size / 1500.0);
        csv += fmt::format("2,bf16,{},{},{},twoshot,{},graph,{},1,1\n", size, tokens, hidden,
                           fusion, 9 + size / 2500.0);
      }
    }
  }
  std::ofstream(dir + "/q.csv") << csv;
  testing::CliResult r = RunSightline("allreduce tune '" + dir + "/q.csv' -o '" + dir + "/lut.h'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("residual_rmsnorm_fp8_per_token"), std::string::npos) << r.out;
  const std::string lut = Slurp(dir + "/lut.h");
  EXPECT_NE(lut.find("kResidualRmsNormFp8PerToken"), std::string::npos);
  EXPECT_NE(lut.find("{2, Fusion::kResidualRmsNormNvfp4, "), std::string::npos) << lut;
  EXPECT_NE(lut.find("// World size 2, fusion residual_rmsnorm_fp8."), std::string::npos);
  const std::string out = dir + "/plots";
  r = RunSightline("allreduce plot '" + dir + "/q.csv' -o '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"w2_bf16_residual_rmsnorm_fp8_graph_best.svg",
                        "w2_bf16_residual_rmsnorm_fp8_per_token_graph_time_twoshot.svg",
                        "w2_bf16_residual_rmsnorm_nvfp4_graph_diff_custom_nccl.svg",
                        "w2_bf16_residual_rmsnorm_nvfp4_graph_diff_twoshot_oneshot.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  }
  const std::string best = Slurp(out + "/w2_bf16_residual_rmsnorm_nvfp4_graph_best.svg");
  EXPECT_NE(best.find("fusion residual_rmsnorm_nvfp4"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(AllReduceCli, BenchPassesArgumentsThrough) {
  const std::string dir = testing::MakeTempDir();
  const std::string fake = dir + "/fake-bench";
  std::ofstream(fake) << "#!/bin/sh\necho \"fake bench: $*\"\nexit 3\n";
  chmod(fake.c_str(), 0755);
  setenv("SIGHTLINE_ALLREDUCE_BENCH", fake.c_str(), 1);
  testing::CliResult r = RunSightline("allreduce bench -b 1K -e 256M --help --mode graph");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "fake bench: -b 1K -e 256M --help --mode graph\n");
  setenv("SIGHTLINE_ALLREDUCE_BENCH", (dir + "/missing").c_str(), 1);
  r = RunSightline("allreduce bench -b 1K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("SIGHTLINE_ALLREDUCE_BENCH"), std::string::npos) << r.err;
  unsetenv("SIGHTLINE_ALLREDUCE_BENCH");
  std::filesystem::remove_all(dir);
}

TEST(AllReduceCli, BenchNotFoundSaysHowToBuildIt) {
  const std::filesystem::path beside = std::filesystem::path(SIGHTLINE_BINARY).parent_path() /
                                       ".." / "cuda" / "allreduce" / "sightline-allreduce-bench";
  if (std::filesystem::exists(beside)) GTEST_SKIP() << "the harness is built here";
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  unsetenv("SIGHTLINE_ALLREDUCE_BENCH");
  setenv("PATH", "/nonexistent", 1);
  testing::CliResult r = RunSightline("allreduce bench -b 1K");
  setenv("PATH", old_path.c_str(), 1);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("sightline-allreduce-bench not found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("CUDA toolkit"), std::string::npos);
  EXPECT_NE(r.err.find("mpirun -n 2"), std::string::npos);
}

}  // namespace
}  // namespace sightline
