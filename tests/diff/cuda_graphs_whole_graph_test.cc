// CUDA graphs traced whole (no node rows) (analyses/cuda_graphs/cuda_graphs.h,
// whole_graph_estimate.h): what is missing is said, and whole-graph runs are estimated from the
// eager step or from an eager reference trace. The case and the truth: cuda_graphs_cases.h.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "analyses/cuda_graphs/cuda_graphs.h"
#include "analyses/cuda_graphs/whole_graph_estimate.h"
#include "analyses/findings/findings.h"
#include "analyses/nvtx_projection/nvtx_projection.h"
#include "base/input_data.h"
#include "cuda_graphs_cases.h"
#include "diff/step_samples.h"
#include "facts/graph_alignment.h"
#include "importers/importer.h"
#include "importers/recorder/recorder_importer.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using namespace cuda_graphs_test;  // NOLINT(build/namespaces)

TEST(CudaGraphs, AnExportWithoutNodeRowsIsCountedAndAligned) {
  const std::string plain = PlainCopy(kData + "nsys/graph_decode_node_h100.sqlite.gz", "nonodes");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(plain.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DELETE FROM CUDA_GRAPH_NODE_EVENTS", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  StatusOr<Trace> t = ImportTrace(plain);
  std::filesystem::remove(plain);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kGraphKernelsWithoutCapture), 12 * 279);
  const CudaGraphsResult g = ComputeCudaGraphs(*t);
  EXPECT_EQ(g.with_capture, 0);
  EXPECT_EQ(g.aligned, 12 * 279);
  const CaptureRangeRow* attention = Row(g, "layer_3 > attention");
  ASSERT_NE(attention, nullptr);
  EXPECT_TRUE(attention->aligned);
  EXPECT_EQ(attention->nodes, 18);
  EXPECT_DOUBLE_EQ(attention->replays, 12.0);
}

TEST(CudaGraphs, WholeGraphTracingAndProfilerTracesSayWhatIsMissing) {
  StatusOr<Trace> whole = ImportTrace(kData + "nsys/graph_decode_graph_h100.sqlite.gz");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const CudaGraphsResult w = ComputeCudaGraphs(*whole);
  EXPECT_EQ(w.graph_kernels, 0);  // whole-graph rows are runs, not kernels
  EXPECT_EQ(w.graph_launches, 12);
  testing::CliResult r =
      testing::RunSightline("analyze '" + kData + "nsys/graph_decode_graph_h100.sqlite.gz'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--cuda-graph-trace=node"), std::string::npos);

  // PyTorch 2.11's profiler: graph kernels carry the cudaGraphLaunch's correlation only.
  StatusOr<Trace> torch = ImportTrace(kData + "kineto/graph_decode_h100.pytorch.json.gz");
  ASSERT_TRUE(torch.ok()) << torch.status().ToString();
  const CudaGraphsResult p = ComputeCudaGraphs(*torch);
  EXPECT_EQ(p.graph_kernels, 10 * 279);
  EXPECT_EQ(p.with_capture, 0);
  EXPECT_EQ(p.graph_launches, 10);
}

// Issue 29: graphs traced as a whole (nsys's default graph mode) hold no kernels; their per-range
// GPU time is estimated from the eager runs of the same step. The truth: the node-traced export
// of the same program (another run), whose replayed kernels are measured per capture range.
TEST(CudaGraphs, WholeGraphRunsAreEstimatedFromTheEagerStep) {
  StatusOr<Trace> whole = ImportTrace(kData + "nsys/graph_decode_graph_h100.sqlite.gz");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const WholeGraphEstimate e = EstimateWholeGraphs(*whole);
  EXPECT_EQ(e.whole_runs, 12);
  EXPECT_EQ(e.capture_windows, 1);
  ASSERT_EQ(e.graphs.size(), 1u);
  const WholeGraphEstimate::Graph& g = e.graphs[0];
  EXPECT_TRUE(g.paired);
  EXPECT_TRUE(g.by_creation);  // CUDA_GRAPH_EVENTS: graph 1 created inside the capture
  EXPECT_EQ(g.runs, 12);
  EXPECT_EQ(g.launches, 279);  // the eager step's kernel count: a runtime and driver call once
  EXPECT_EQ(g.matched, 279);
  EXPECT_EQ(g.eager_runs, 12);
  EXPECT_EQ(g.eager_range, "eager_step_0");
  DurationNs sum = 0;
  for (const WholeGraphEstimate::Range& r : g.ranges) sum += r.eager_ns;
  EXPECT_EQ(sum, g.eager_ns);
  EXPECT_LT(g.eager_ns, g.median_run_ns);  // a replay's kernels and the gaps between them

  StatusOr<Trace> node = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const CudaGraphsResult measured = ComputeCudaGraphs(*node);
  int compared = 0;
  for (const WholeGraphEstimate::Range& r : g.ranges) {
    const CaptureRangeRow* m = Row(measured, "capture > " + r.path);
    if (r.path == "(no range)") continue;
    ASSERT_NE(m, nullptr) << r.path;
    EXPECT_EQ(r.launches, m->nodes) << r.path;
    // Measured: 3.0-7.0% apart on these two runs (eager kernels run a little longer).
    EXPECT_NEAR(static_cast<double>(r.eager_ns), static_cast<double>(m->per_replay_ns),
                0.10 * static_cast<double>(m->per_replay_ns))
        << r.path;
    ++compared;
  }
  EXPECT_EQ(compared, 17);  // 8 x (attention, mlp) and head

  testing::CliResult cli =
      testing::RunSightline("analyze '" + kData + "nsys/graph_decode_graph_h100.sqlite.gz'");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("estimated from eager runs"), std::string::npos);
}

// Captures pair with graphs in order only when a process has as many of each; a capture whose
// launches no eager run matches gives no estimate.
TEST(CudaGraphs, WholeGraphPairingNeedsOneCapturePerGraph) {
  auto build = [](int captures, bool eager) {
    testing::TraceFixture f;
    f.Device(0);
    for (int c = 0; c < captures; ++c) {
      const TimeNs base = c * 1'000;
      f.Api("cudaStreamBeginCapture", base, base + 5);
      f.Range("layer_0", base + 10, base + 100);
      f.Api("cudaLaunchKernel", base + 20, base + 25, ApiKind::kRuntime, {}, 500 + c * 10);
      f.Api("cudaLaunchKernel", base + 30, base + 35, ApiKind::kRuntime, {}, 501 + c * 10);
      f.Api("cudaStreamEndCapture", base + 200, base + 205);
    }
    for (int run = 0; run < 2; ++run) {
      const TimeNs base = 10'000 + run * 1'000;
      f.Api("cudaGraphLaunch", base, base + 5, ApiKind::kRuntime, {}, 900 + run);
      f.Kernel(WholeGraphName(1), base + 10, base + 110, {}, 900 + run);
    }
    if (eager) {
      f.Range("eager_step_0", 20'000, 20'500);
      f.Range("layer_0", 20'010, 20'400);
      f.Launch("gemm", 20'020, 20'025, 20'030, 20'070);
      f.Launch("norm", 20'030, 20'035, 20'070, 20'080);
    }
    return f.Build();
  };
  const WholeGraphEstimate one = EstimateWholeGraphs(build(1, true));
  ASSERT_EQ(one.graphs.size(), 1u);
  EXPECT_TRUE(one.graphs[0].paired);
  EXPECT_EQ(one.graphs[0].launches, 2);
  EXPECT_EQ(one.graphs[0].matched, 2);
  ASSERT_EQ(one.graphs[0].ranges.size(), 1u);
  EXPECT_EQ(one.graphs[0].ranges[0].path, "layer_0");
  EXPECT_EQ(one.graphs[0].ranges[0].eager_ns, 50);
  EXPECT_EQ(one.graphs_estimated, 1);

  const WholeGraphEstimate two = EstimateWholeGraphs(build(2, true));
  EXPECT_EQ(two.capture_windows, 2);
  EXPECT_FALSE(two.graphs[0].paired);  // two captures, one graph with runs: which one is unknown
  EXPECT_EQ(two.graphs_estimated, 0);
  // A creation record names the capture: graph 1 created inside the second one.
  Trace named = build(2, true);
  named.graph_creations.push_back({1, 1'002, named.api_calls.pid[0], named.api_calls.tid[0]});
  const WholeGraphEstimate by_creation = EstimateWholeGraphs(named);
  EXPECT_TRUE(by_creation.graphs[0].paired);
  EXPECT_TRUE(by_creation.graphs[0].by_creation);
  EXPECT_EQ(by_creation.graphs[0].capture_start_ns, 1'000);
  EXPECT_EQ(by_creation.graphs_estimated, 1);
  // Created outside every capture (the capture before the recorded window): not paired by order.
  named.graph_creations[0].time_ns = 5'000;
  EXPECT_FALSE(EstimateWholeGraphs(named).graphs[0].paired);

  const WholeGraphEstimate none = EstimateWholeGraphs(build(1, false));
  EXPECT_TRUE(none.graphs[0].paired);
  EXPECT_EQ(none.graphs[0].eager_runs, 0);
  EXPECT_EQ(none.graphs_estimated, 0);
}

// Issue 29: the eager runs can come from a second trace (`analyze --eager-reference`): the same
// program run eagerly and recorded separately. The graph trace alone holds no eager run, so
// nothing is estimated; with the reference, its eager run gives the estimate; the reference's
// own timeline (another process, another clock) does not matter.
TEST(CudaGraphs, WholeGraphRunsAreEstimatedFromAnEagerReferenceTrace) {
  testing::TraceFixture graph;
  graph.Device(0);
  graph.Api("cudaStreamBeginCapture", 1'000, 1'005);
  graph.Range("layer_0", 1'010, 1'100);
  graph.Range("attention", 1'011, 1'050);
  graph.Api("cudaLaunchKernel", 1'020, 1'025, ApiKind::kRuntime, {}, 500);
  graph.Range("mlp", 1'055, 1'099);
  graph.Api("cudaLaunchKernel", 1'060, 1'065, ApiKind::kRuntime, {}, 501);
  graph.Api("cudaLaunchKernel", 1'070, 1'075, ApiKind::kRuntime, {}, 502);
  graph.Api("cudaStreamEndCapture", 1'200, 1'205);
  for (int run = 0; run < 3; ++run) {
    const TimeNs base = 10'000 + run * 1'000;
    graph.Api("cudaGraphLaunch", base, base + 5, ApiKind::kRuntime, {}, 900 + run);
    graph.Kernel(WholeGraphName(1), base + 10, base + 150, {}, 900 + run);
  }
  const Trace graph_trace = graph.Build();
  const WholeGraphEstimate alone = EstimateWholeGraphs(graph_trace);
  ASSERT_EQ(alone.graphs.size(), 1u);
  EXPECT_TRUE(alone.graphs[0].paired);
  EXPECT_EQ(alone.graphs[0].eager_runs, 0);
  EXPECT_EQ(alone.graphs_estimated, 0);
  EXPECT_FALSE(alone.eager_reference);

  testing::TraceFixture eager;
  eager.Device(0);
  for (int step = 0; step < 2; ++step) {
    const TimeNs base = 5'000'000 + step * 10'000;
    eager.Range(fmt::format("eager_step_{}", step), base, base + 5'000);
    eager.Range("layer_0", base + 10, base + 4'000);
    eager.Range("attention", base + 11, base + 1'000);
    eager.Launch("attn", base + 20, base + 25, base + 30, base + 70 + step * 10);  // 40, 50 ns
    eager.Range("mlp", base + 1'010, base + 3'900);
    eager.Launch("up", base + 1'020, base + 1'025, base + 1'030, base + 1'130);    // 100 ns
    eager.Launch("down", base + 1'040, base + 1'045, base + 1'130, base + 1'150);  // 20 ns
  }
  const Trace eager_trace = eager.Build();
  const WholeGraphEstimate e = EstimateWholeGraphs(graph_trace, &eager_trace);
  EXPECT_TRUE(e.eager_reference);
  ASSERT_EQ(e.graphs.size(), 1u);
  const WholeGraphEstimate::Graph& g = e.graphs[0];
  EXPECT_EQ(g.launches, 3);
  EXPECT_EQ(g.matched, 3);
  EXPECT_EQ(g.eager_runs, 2);
  EXPECT_EQ(g.eager_range, "eager_step_0");
  ASSERT_EQ(g.ranges.size(), 2u);
  EXPECT_EQ(g.ranges[0].path, "layer_0 > attention");
  EXPECT_EQ(g.ranges[0].eager_ns, 45);  // the mean of 40 and 50
  EXPECT_EQ(g.ranges[1].path, "layer_0 > mlp");
  EXPECT_EQ(g.ranges[1].eager_ns, 120);
  EXPECT_EQ(e.graphs_estimated, 1);
}

}  // namespace
}  // namespace sightline
