// The all-reduce sweep CSV reader (line-numbered errors) and the grid arrangement and lookup rule
// shared by tune and plot.
#include <gtest/gtest.h>

#include <cmath>

#include "allreduce/sweep_grid.h"
#include "importers/allreduce_sweep/sweep_csv.h"

namespace sightline {
namespace {

const std::string kHeader = std::string(kSweepCsvHeader) + "\n";

TEST(SweepCsv, ReadsGridAndSizeRows) {
  const std::string csv = kHeader +
                          "2,bf16,1024,0,0,nccl,none,eager,30.5,0.03,0.03\r\n"
                          "\n"
                          "# a comment\n"
                          "2,bf16,8192,4,1024,oneshot,residual_rmsnorm,graph,7.25,1.1,1.1\n";
  StatusOr<std::vector<SweepRow>> rows = ParseSweepCsv(csv, "s.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_FALSE((*rows)[0].is_grid());
  EXPECT_EQ((*rows)[0].size_bytes, 1024);
  EXPECT_DOUBLE_EQ((*rows)[0].time_us, 30.5);
  EXPECT_EQ((*rows)[0].where, "s.csv:2");
  const SweepRow& g = (*rows)[1];
  EXPECT_TRUE(g.is_grid());
  EXPECT_EQ(g.strategy, ArStrategy::kOneShot);
  EXPECT_EQ(g.fusion, ArFusion::kResidualRmsNorm);
  EXPECT_EQ(g.mode, ArMode::kGraph);
  EXPECT_EQ(g.hidden_size, 1024);
  EXPECT_EQ(g.num_tokens, 4);
  EXPECT_EQ(g.where, "s.csv:5");
}

// Every fusion's CSV spelling reads back to itself; a quantizing fusion is a fused row (it needs
// tokens and hidden size) and gets its own grid.
TEST(SweepCsv, ReadsEveryFusionName) {
  std::string csv = kHeader;
  for (ArFusion f : kArFusions) {
    csv += "2,bf16,8192,4,1024,oneshot," + std::string(ArFusionName(f)) + ",graph,7.25,1.1,1.1\n";
  }
  StatusOr<std::vector<SweepRow>> rows = ParseSweepCsv(csv, "f.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), std::size(kArFusions));
  for (size_t i = 0; i < rows->size(); ++i) EXPECT_EQ((*rows)[i].fusion, kArFusions[i]);
  EXPECT_EQ(ArFusionName(ArFusion::kResidualRmsNormFp8), "residual_rmsnorm_fp8");
  EXPECT_EQ(ArFusionName(ArFusion::kResidualRmsNormFp8PerToken), "residual_rmsnorm_fp8_per_token");
  EXPECT_EQ(ArFusionName(ArFusion::kResidualRmsNormNvfp4), "residual_rmsnorm_nvfp4");
  EXPECT_EQ(BuildSweepGrids(*rows).size(), std::size(kArFusions));
  const StatusOr<std::vector<SweepRow>> bad =
      ParseSweepCsv(kHeader + "2,bf16,2048,0,0,nccl,residual_rmsnorm_nvfp4,eager,3,1,1\n", "b.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fused row needs"), std::string::npos);
  const StatusOr<std::vector<SweepRow>> unknown = ParseSweepCsv(
      kHeader + "2,bf16,8192,4,1024,nccl,residual_rmsnorm_int8,eager,3,1,1\n", "u.csv");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("residual_rmsnorm_nvfp4"), std::string::npos);
}

// The committed Lamport sweep of run D (docs/allreduce.md): every row reads, the strategy
// keeps its spelling through ArStrategyName, and the size sweep puts the Lamport times in their
// own column (a reader that folded lamport into another strategy would fail here).
TEST(SweepCsv, ReadsCommittedLamportSweep) {
  const std::string path =
      std::string(SIGHTLINE_SOURCE_DIR) + "/docs/evidence/allreduce/sizes_w2_lamport_1.csv";
  StatusOr<std::vector<SweepRow>> rows = ReadSweepCsvFiles({path});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 88u);
  int lamport = 0;
  for (const SweepRow& r : *rows) {
    if (r.strategy != ArStrategy::kLamport) continue;
    ++lamport;
    EXPECT_EQ(ArStrategyName(r.strategy), "lamport");
  }
  EXPECT_EQ(lamport, 22);
  const std::vector<SizeSweep> sweeps = BuildSizeSweeps(*rows);
  ASSERT_EQ(sweeps.size(), 2u);  // eager, graph
  const SizeSweep& graph = sweeps[1];
  ASSERT_EQ(graph.key.mode, ArMode::kGraph);
  ASSERT_EQ(graph.sizes.front(), 1024);
  EXPECT_DOUBLE_EQ(graph.time_us[static_cast<int>(ArStrategy::kLamport)][0], 2.862);
  EXPECT_DOUBLE_EQ(graph.time_us[static_cast<int>(ArStrategy::kNccl)][0], 6.330);
}

// A lamport row written the way the harness writes it reads back as lamport, and a 2-D grid
// cell where Lamport is fastest makes it the cell's best.
TEST(SweepCsv, LamportRoundTripsIntoGrid) {
  const std::string csv = kHeader +
                          "2,bf16,2048,1,1024,nccl,none,graph,6.3,0,0\n"
                          "2,bf16,2048,1,1024,oneshot,none,graph,5.3,0,0\n"
                          "2,bf16,2048,1,1024,lamport,none,graph,2.9,0,0\n";
  StatusOr<std::vector<SweepRow>> rows = ParseSweepCsv(csv, "l.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[2].strategy, ArStrategy::kLamport);
  const std::vector<SweepGrid> grids = BuildSweepGrids(*rows);
  ASSERT_EQ(grids.size(), 1u);
  EXPECT_EQ(grids[0].Best(0, 0), ArStrategy::kLamport);
  EXPECT_DOUBLE_EQ(grids[0].RunnerUpTime(0, 0), 5.3);
}

struct BadRow {
  const char* name;
  std::string body;
  std::string expect;  // must appear in the message, with the line number
};

class SweepCsvBad : public ::testing::TestWithParam<BadRow> {};

TEST_P(SweepCsvBad, NamesLineAndProblem) {
  const BadRow& c = GetParam();
  StatusOr<std::vector<SweepRow>> rows =
      ParseSweepCsv(kHeader + "2,bf16,1024,0,0,nccl,none,eager,30,1,1\n" + c.body, "s.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(rows.status().message().find("s.csv:3"), std::string::npos) << rows.status().message();
  EXPECT_NE(rows.status().message().find(c.expect), std::string::npos) << rows.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, SweepCsvBad,
    ::testing::Values(
        BadRow{"columns", "2,bf16,1024,0,0,nccl,none,eager,30,1\n", "10 columns, expected 11"},
        BadRow{"strategy", "2,bf16,2048,0,0,threeshot,none,eager,30,1,1\n",
               "unknown strategy 'threeshot'"},
        BadRow{"fusion", "2,bf16,2048,0,0,nccl,layernorm,eager,30,1,1\n", "unknown fusion"},
        BadRow{"mode", "2,bf16,2048,0,0,nccl,none,lazy,30,1,1\n", "unknown mode"},
        BadRow{"dtype", "2,int8,2048,0,0,nccl,none,eager,30,1,1\n", "unknown dtype"},
        BadRow{"nonnumeric", "2,bf16,2048,0,0,nccl,none,eager,fast,1,1\n",
               "(time_us): 'fast' is not a finite number"},
        BadRow{"negative_time", "2,bf16,2048,0,0,nccl,none,eager,-3,1,1\n", "must be > 0"},
        BadRow{"nan_time", "2,bf16,2048,0,0,nccl,none,eager,nan,1,1\n", "not a finite number"},
        BadRow{"fraction", "2.5,bf16,2048,0,0,nccl,none,eager,3,1,1\n", "not an integer"},
        BadRow{"half_grid", "2,bf16,2048,4,0,nccl,none,eager,3,1,1\n", "both be 0"},
        BadRow{"size_mismatch", "2,bf16,4096,4,1024,nccl,none,eager,3,1,1\n",
               "4 tokens x 1024 hidden x 2 bytes (bf16) = 8192"},
        BadRow{"fused_1d", "2,bf16,2048,0,0,nccl,residual_rmsnorm,eager,3,1,1\n",
               "fused row needs"},
        BadRow{"duplicate", "2,bf16,1024,0,0,nccl,none,eager,31,1,1\n", "duplicate cell"}),
    [](const ::testing::TestParamInfo<BadRow>& info) { return std::string(info.param.name); });

TEST(SweepCsv, DuplicateNamesBothLines) {
  StatusOr<std::vector<SweepRow>> rows =
      ParseSweepCsv(kHeader +
                        "2,bf16,1024,0,0,nccl,none,eager,30,1,1\n"
                        "2,bf16,1024,0,0,nccl,none,graph,30,1,1\n"
                        "2,bf16,1024,0,0,nccl,none,eager,31,1,1\n",
                    "s.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("s.csv:4: duplicate"), std::string::npos);
  EXPECT_NE(rows.status().message().find("already measured at s.csv:2"), std::string::npos);
}

TEST(SweepCsv, WrongHeaderAndEmpty) {
  StatusOr<std::vector<SweepRow>> bad = ParseSweepCsv("a,b,c\n1,2,3\n", "x.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.csv:1: not an all-reduce sweep CSV"), std::string::npos);
  EXPECT_FALSE(ParseSweepCsv("", "x.csv").ok());
  EXPECT_TRUE(ParseSweepCsv(kHeader, "x.csv").ok());  // a header alone is a valid, empty sweep
}

TEST(SweepGrid, ArrangesCellsAndFindsBest) {
  StatusOr<std::vector<SweepRow>> rows =
      ParseSweepCsv(kHeader +
                        "2,bf16,256,1,128,nccl,none,graph,30,0,0\n"
                        "2,bf16,256,1,128,oneshot,none,graph,8,0,0\n"
                        "2,bf16,256,1,128,twoshot,none,graph,9,0,0\n"
                        "2,bf16,1024,1,512,nccl,none,graph,30,0,0\n"
                        "2,bf16,4096,4,512,twoshot,none,graph,12,0,0\n"
                        "2,bf16,1024,0,0,nccl,none,graph,30,1,2\n",
                    "s.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  const std::vector<SweepGrid> grids = BuildSweepGrids(*rows);
  ASSERT_EQ(grids.size(), 1u);
  const SweepGrid& g = grids[0];
  EXPECT_EQ(g.hidden, (std::vector<int64_t>{128, 512}));
  EXPECT_EQ(g.tokens, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(g.Best(0, 0), ArStrategy::kOneShot);
  EXPECT_DOUBLE_EQ(g.RunnerUpTime(0, 0), 9);
  EXPECT_EQ(g.Best(1, 0), ArStrategy::kNccl);
  EXPECT_TRUE(std::isnan(g.RunnerUpTime(1, 0)));
  EXPECT_EQ(g.Best(1, 1), ArStrategy::kTwoShot);
  EXPECT_FALSE(g.Best(0, 1).has_value());  // hidden 128 x 4 tokens was not measured
  const std::vector<SizeSweep> sweeps = BuildSizeSweeps(*rows);
  ASSERT_EQ(sweeps.size(), 1u);
  EXPECT_EQ(sweeps[0].sizes, (std::vector<int64_t>{1024}));
  EXPECT_DOUBLE_EQ(sweeps[0].busbw_gbps[0][0], 2);
}

TEST(SweepGrid, NearestInLog2Space) {
  const std::vector<int64_t> grid = {1, 4, 16, 1024};
  EXPECT_EQ(NearestLog2Index(grid, 0), -1);
  EXPECT_EQ(NearestLog2Index(grid, 1), 0);
  EXPECT_EQ(NearestLog2Index(grid, 2), 0);  // geometric mean of 1 and 4: the tie goes down
  EXPECT_EQ(NearestLog2Index(grid, 3), 1);
  EXPECT_EQ(NearestLog2Index(grid, 8), 1);  // the tie between 4 and 16
  EXPECT_EQ(NearestLog2Index(grid, 9), 2);
  EXPECT_EQ(NearestLog2Index(grid, 128), 2);  // sqrt(16 * 1024) = 128
  EXPECT_EQ(NearestLog2Index(grid, 129), 3);
  EXPECT_EQ(NearestLog2Index(grid, 1024), 3);
  EXPECT_EQ(NearestLog2Index(grid, 1025), -1);
  EXPECT_EQ(NearestLog2Index({}, 5), -1);
  EXPECT_EQ(NearestLog2Index({64}, 64), 0);
}

}  // namespace
}  // namespace sightline
