// Graphs captured under no range (torch.compile's CUDA graph trees, most programs) are one row
// per graph, not one row whose "kernels per replay" adds the graphs' nodes and whose replays are
// halved (the compiled Hugging Face generate() showed 594 kernels x 94 replays for two graphs of
// 297 kernels replayed 125 and 63 times).
#include <gtest/gtest.h>

#include "analyses/cuda_graphs/cuda_graphs.h"
#include "facts/graph_kernel_paths.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

TEST(CudaGraphsRows, KernelsCapturedUnderNoRangeAreOneRowPerGraph) {
  testing::TraceFixture f;
  const StringId name = f.Intern("gemm");
  std::vector<int32_t> graph_of;
  TimeNs at = 0;
  // Graph 0: nodes 1..3, replayed 4 times; graph 1: nodes 11..13, replayed 2 times.
  for (auto [graph, replays] : {std::pair{0, 4}, std::pair{1, 2}}) {
    for (int r = 0; r < replays; ++r) {
      for (int n = 1; n <= 3; ++n) {
        KernelRow k;
        k.start_ns = at;
        k.end_ns = at + 100;
        k.name = name;
        k.graph_node = 1000 + at;
        k.capture_node = graph * 10 + n;
        k.capture_ns = 5;
        f.builder().AddKernel(k);
        graph_of.push_back(graph);
        at += 200;
      }
    }
  }
  const Trace t = f.Build();
  GraphKernelPaths paths;
  paths.graph.assign(t.kernels.size(), 1);
  paths.source.assign(t.kernels.size(), PathSource::kCapture);
  paths.paths = {""};
  paths.path.assign(t.kernels.size(), 0);
  KernelGraphs graphs{graph_of, {"graph 1 (3 kernels)", "graph 2 (3 kernels)"}};

  const CudaGraphsResult split = ComputeCudaGraphs(t, paths, nullptr, &graphs);
  ASSERT_EQ(split.rows.size(), 2u);
  EXPECT_EQ(split.rows[0].path, "graph 1 (3 kernels)");
  EXPECT_EQ(split.rows[0].nodes, 3);
  EXPECT_DOUBLE_EQ(split.rows[0].replays, 4);
  EXPECT_EQ(split.rows[0].per_replay_ns, 300);
  EXPECT_EQ(split.rows[1].nodes, 3);
  EXPECT_DOUBLE_EQ(split.rows[1].replays, 2);

  // Without the graphs: the old single row, which the split replaces.
  const CudaGraphsResult one = ComputeCudaGraphs(t, paths);
  ASSERT_EQ(one.rows.size(), 1u);
  EXPECT_EQ(one.rows[0].nodes, 6);
}

}  // namespace
}  // namespace sightline
