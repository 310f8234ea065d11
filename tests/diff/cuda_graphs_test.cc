// CUDA graph kernels attributed to the ranges of their capture
// (analyses/cuda_graphs/cuda_graphs.h), on the graph-decode case recorded on an H100
// (examples/graph_decode/): 8 layers, NVTX ranges layer_i > attention / mlp and head around the
// code, captured once and replayed 12 times, then run eagerly 12 times. The truth comes from the
// program and from the export's own tables, joined here with SQL, not from Sightline. Here: node
// tracing, the NVTX projection, and replays matched with the eager step; the loops and recordings:
// cuda_graphs_loops_test.cc; whole-graph runs: cuda_graphs_whole_graph_test.cc.
#include "analyses/cuda_graphs/cuda_graphs.h"

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

TEST(CudaGraphs, NodeTracingAttributesEveryReplayedKernelToItsCaptureRanges) {
  const std::string gz = kData + "nsys/graph_decode_node_h100.sqlite.gz";
  StatusOr<Trace> t = ImportTrace(gz);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const CudaGraphsResult g = ComputeCudaGraphs(*t);
  EXPECT_EQ(g.graph_launches, 12);
  EXPECT_EQ(g.graph_kernels, 12 * 279);
  EXPECT_EQ(g.with_capture, g.graph_kernels);
  EXPECT_EQ(g.in_ranges, g.graph_kernels);  // every kernel of the step is inside a range
  EXPECT_EQ(g.rows.size(), 18u);            // 8 x (attention, mlp), head, and the step's start
  // Per replay, each range's kernels are the eager step's: 18 in attention, 15 in mlp, 13 in head.
  for (int layer = 0; layer < 8; ++layer) {
    const std::string l = "capture > layer_" + std::to_string(layer);
    const CaptureRangeRow* a = Row(g, l + " > attention");
    const CaptureRangeRow* m = Row(g, l + " > mlp");
    ASSERT_NE(a, nullptr) << l;
    ASSERT_NE(m, nullptr) << l;
    EXPECT_EQ(a->nodes, 18) << l;
    EXPECT_EQ(m->nodes, 15) << l;
    EXPECT_DOUBLE_EQ(a->replays, 12.0);
  }
  ASSERT_NE(Row(g, "capture > head"), nullptr);
  EXPECT_EQ(Row(g, "capture > head")->nodes, 13);
  // Side by side with the eager steps: the same ranges below eager_step_N, 12 runs, the same
  // kernels per run as per replay.
  for (const CaptureRangeRow& row : g.rows) {
    if (row.path == "capture") continue;  // the step's start, outside every inner range
    EXPECT_EQ(row.eager_instances, 12) << row.path;
    EXPECT_DOUBLE_EQ(row.eager_kernels_per_instance, static_cast<double>(row.nodes)) << row.path;
    EXPECT_GT(row.eager_per_instance_ns, 0) << row.path;
  }

  // The figures against the export's own tables, joined in SQL.
  StatusOr<std::string> bytes = ReadInput(gz);
  ASSERT_TRUE(bytes.ok());
  const std::string plain = (std::filesystem::temp_directory_path() /
                             ("sightline_graphs_" + std::to_string(::getpid()) + ".sqlite"))
                                .string();
  std::ofstream(plain, std::ios::binary)
      .write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  for (const char* layer : {"layer_0", "layer_5"}) {
    for (const char* part : {"attention", "mlp"}) {
      const Truth truth = SqlTruth(plain, layer, part);
      const CaptureRangeRow* row = Row(g, std::string("capture > ") + layer + " > " + part);
      ASSERT_NE(row, nullptr);
      EXPECT_EQ(row->kernels, truth.kernels) << layer << part;
      EXPECT_EQ(row->nodes, truth.nodes) << layer << part;
      EXPECT_EQ(row->gpu_ns, truth.gpu_ns) << layer << part;
    }
  }
  std::filesystem::remove(plain);

  // The eager steps are the default iterations; the graph steps are found too. Their
  // launch-bound finding knows the trace replays graphs already: take the graph path, not "try
  // CUDA graphs".
  testing::CliResult r = testing::RunSightline("analyze --format json '" + gz + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"eager_step_N\""), std::string::npos);
  EXPECT_NE(r.out.find("This trace already replays CUDA graphs (12 graph launches"),
            std::string::npos);
  EXPECT_EQ(r.out.find("Capture the loop body (the decode step) in a CUDA graph"),
            std::string::npos);
}

// Issue 29: the NVTX projection counts each replayed kernel in the ranges that captured it too.
// The truth is the program's: per replay, every layer's attention and mlp hold the eager step's
// kernels (18 and 15), so each range name holds twice the eager figure; the graph_step_N ranges
// keep their replay's 279 kernels; the capture range, around none of the launches, holds each
// replayed kernel once.
TEST(CudaGraphs, NvtxProjectionCountsReplayedKernelsInTheirCaptureRanges) {
  StatusOr<Trace> t = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  StatusOr<NvtxProjectionResult> r = ComputeNvtxProjection(*testing::Ctx(*t), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->graph_kernels, 12 * 279);
  EXPECT_EQ(r->kernels_with_capture, r->graph_kernels);
  EXPECT_EQ(r->kernels_by_capture, r->graph_kernels);
  EXPECT_EQ(r->kernels_in_ranges, r->kernels);  // each kernel counted once
  auto group = [&](const std::string& name, int depth) -> const NvtxRangeGroup* {
    for (const NvtxRangeGroup& g : r->groups) {
      if (t->str(g.name) == name && g.depth == depth) return &g;
    }
    return nullptr;
  };
  const NvtxRangeGroup* attention = group("attention", 2);
  const NvtxRangeGroup* mlp = group("mlp", 2);
  ASSERT_NE(attention, nullptr);
  ASSERT_NE(mlp, nullptr);
  EXPECT_EQ(attention->work.kernel_count, 2 * 12 * 8 * 18);
  EXPECT_EQ(mlp->work.kernel_count, 2 * 12 * 8 * 15);
  for (int layer = 0; layer < 8; ++layer) {
    const NvtxRangeGroup* l = group("layer_" + std::to_string(layer), 1);
    ASSERT_NE(l, nullptr) << layer;
    EXPECT_EQ(l->work.kernel_count, 2 * 12 * (18 + 15)) << layer;
  }
  const NvtxRangeGroup* capture = group("capture", 0);
  ASSERT_NE(capture, nullptr);
  EXPECT_GE(capture->work.kernel_count, 12 * 279);
  int graph_steps = 0;
  for (const NvtxRangeGroup& g : r->groups) {
    if (!t->str(g.name).starts_with("graph_step_")) continue;
    ++graph_steps;
    EXPECT_EQ(g.work.kernel_count, 279) << t->str(g.name);
  }
  EXPECT_EQ(graph_steps, 12);
}

// Issue 29: without capture points (the capture before the recorded window), a replay is matched
// with the same step run eagerly. The truth is the capture points the export does have: with them
// removed, every kernel gets the ranges of its capture below the outermost one, with the same
// kernels, nodes and GPU time per path.
TEST(CudaGraphs, WithoutCapturePointsReplaysAreMatchedWithTheEagerStep) {
  StatusOr<Trace> t = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const CudaGraphsResult by_capture = ComputeCudaGraphs(*t);
  Trace stripped = std::move(*t);
  testing::RemoveCapturePoints(stripped);
  const GraphAlignment a = AlignGraphKernels(stripped);
  EXPECT_EQ(a.kernels, 12 * 279);
  EXPECT_EQ(a.kernels_matched, 12 * 279);
  EXPECT_EQ(a.replays, 12);
  EXPECT_EQ(a.replays_matched, 12);
  EXPECT_EQ(a.sequences, 1);  // one graph, replayed 12 times
  const CudaGraphsResult g = ComputeCudaGraphs(stripped);
  EXPECT_EQ(g.with_capture, 0);
  EXPECT_EQ(g.aligned, g.graph_kernels);
  // The kernels captured in "capture" alone (the step's start, outside every inner range) are
  // held in the eager step only by the step's own range, which says nothing of a kernel.
  ASSERT_NE(Row(by_capture, "capture"), nullptr);
  ASSERT_NE(Row(g, "(no range open)"), nullptr);
  EXPECT_EQ(Row(g, "(no range open)")->kernels, Row(by_capture, "capture")->kernels);
  EXPECT_EQ(g.in_ranges, by_capture.in_ranges - Row(by_capture, "capture")->kernels);
  int compared = 0;
  for (const CaptureRangeRow& c : by_capture.rows) {
    if (!c.path.starts_with("capture > ")) continue;
    const CaptureRangeRow* row = Row(g, c.path.substr(10));
    ASSERT_NE(row, nullptr) << c.path;
    EXPECT_TRUE(row->aligned);
    EXPECT_EQ(row->nodes, c.nodes) << c.path;
    EXPECT_EQ(row->kernels, c.kernels) << c.path;
    EXPECT_EQ(row->gpu_ns, c.gpu_ns) << c.path;
    EXPECT_EQ(row->eager_instances, 12) << c.path;
    EXPECT_DOUBLE_EQ(row->eager_kernels_per_instance, static_cast<double>(c.nodes)) << c.path;
    ++compared;
  }
  EXPECT_EQ(compared, 17);  // 8 x (attention, mlp) and head
}

// Issue 29: the NVTX projection takes aligned points through the same mechanism as capture points.
// With the capture points of the shipped export removed, every layer_i, attention, mlp and head
// row has the kernels, GPU time and span of the row with them: the replayed kernels move from the
// capture's layer_i > attention to the matched eager step's, and the eager step's own range
// (which holds the whole matched run) does not take them. The facts say which method placed how
// many: all 3,348 by capture; without capture points the same less the 12 x 2 kernels captured
// outside every inner range (their eager counterparts lie in the eager step's own range only).
TEST(CudaGraphs, NvtxProjectionFromAlignedPointsEqualsCapturePoints) {
  StatusOr<Trace> t = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  StatusOr<NvtxProjectionResult> by_capture = ComputeNvtxProjection(*testing::Ctx(*t), {});
  ASSERT_TRUE(by_capture.ok()) << by_capture.status().ToString();
  Trace stripped = std::move(*t);
  testing::RemoveCapturePoints(stripped);
  StatusOr<NvtxProjectionResult> aligned = ComputeNvtxProjection(*testing::Ctx(stripped), {});
  ASSERT_TRUE(aligned.ok()) << aligned.status().ToString();

  EXPECT_EQ(by_capture->graph_kernels, 12 * 279);
  EXPECT_EQ(by_capture->kernels_by_capture, 12 * 279);
  EXPECT_EQ(by_capture->kernels_by_alignment, 0);
  EXPECT_EQ(aligned->graph_kernels, 12 * 279);
  EXPECT_EQ(aligned->kernels_with_capture, 0);
  EXPECT_EQ(aligned->kernels_aligned, 12 * 279);
  EXPECT_EQ(aligned->kernels_by_capture, 0);
  // 279 = 8 x (18 + 15) + 13 in head + 2 captured outside every inner range.
  EXPECT_EQ(aligned->kernels_by_alignment, 12 * (279 - 2));
  EXPECT_EQ(aligned->graph_kernels_unattributed(), 12 * 2);
  EXPECT_EQ(aligned->kernels_in_ranges, aligned->kernels);  // each kernel counted once

  auto find = [&](const NvtxProjectionResult& r, const Trace& trace, const std::string& name,
                  int depth) -> const NvtxRangeGroup* {
    for (const NvtxRangeGroup& g : r.groups) {
      if (trace.str(g.name) == name && g.depth == depth) return &g;
    }
    return nullptr;
  };
  const Trace& tc = stripped;  // the same strings and ranges in both
  int compared = 0;
  for (const NvtxRangeGroup& c : by_capture->groups) {
    const std::string name(tc.str(c.name));
    const bool layer = name.starts_with("layer_");
    if (!layer && name != "attention" && name != "mlp" && name != "head") continue;
    const NvtxRangeGroup* a = find(*aligned, tc, name, c.depth);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ(a->count, c.count) << name;
    EXPECT_EQ(a->work.kernel_count, c.work.kernel_count) << name;
    EXPECT_EQ(a->work.kernel_time_ns, c.work.kernel_time_ns) << name;
    EXPECT_EQ(a->gpu_span_total_ns, c.gpu_span_total_ns) << name;
    EXPECT_EQ(a->path, c.path) << name;
    ++compared;
  }
  EXPECT_EQ(compared, 8 + 2 + 1);  // layer_0..7, attention, mlp (one row each per depth), head
  // Each attention holds the eager steps' kernels and, per replay, the same again.
  const NvtxRangeGroup* attention = find(*aligned, tc, "attention", 2);
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->work.kernel_count, 2 * 12 * 8 * 18);
  // The eager steps keep their own kernels only: 279 each, the aligned replays not among them.
  int eager_steps = 0;
  for (const NvtxRangeGroup& g : aligned->groups) {
    if (!tc.str(g.name).starts_with("eager_step_")) continue;
    ++eager_steps;
    EXPECT_EQ(g.work.kernel_count, 279) << tc.str(g.name);
  }
  EXPECT_EQ(eager_steps, 12);
}

// The PyTorch profiler's trace of the same program: no capture points and no NVTX ranges (only
// operators), so the replays are matched with an eager step (each of 279 kernels with a distinct
// eager kernel of the same name, in the same order) but no range can be named.
TEST(CudaGraphs, ProfilerTraceReplaysAreMatchedInOrder) {
  StatusOr<Trace> t = ImportTrace(kData + "kineto/graph_decode_h100.pytorch.json.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const GraphAlignment a = AlignGraphKernels(*t);
  EXPECT_EQ(a.replays, 10);
  EXPECT_EQ(a.replays_matched, 10);
  EXPECT_EQ(a.kernels_matched, 10 * 279);
  const KernelTable& k = t->kernels;
  const std::vector<uint8_t> graph = GraphKernelRows(*t);
  std::map<int32_t, std::vector<int32_t>> replays;  // graph launch -> kernels
  for (size_t i = 0; i < k.size(); ++i) {
    if (a.counterpart[i] != kNoRow) replays[k.launch_call[i]].push_back(static_cast<int32_t>(i));
  }
  ASSERT_EQ(replays.size(), 10u);
  for (auto& [launch, rows] : replays) {
    std::sort(rows.begin(), rows.end(), [&](int32_t x, int32_t y) {
      return std::pair(k.start_ns[x], x) < std::pair(k.start_ns[y], y);
    });
    std::set<int32_t> counterparts;
    for (size_t i = 0; i < rows.size(); ++i) {
      const int32_t e = a.counterpart[rows[i]];
      EXPECT_EQ(k.name[e], k.name[rows[i]]);
      EXPECT_EQ(graph[e], 0);  // an eager kernel
      if (i > 0) {             // in the replay's GPU order, launched in the same order
        EXPECT_LT(k.launch_call[a.counterpart[rows[i - 1]]], k.launch_call[e]);
      }
      counterparts.insert(e);
    }
    EXPECT_EQ(counterparts.size(), 279u);
  }
  const CudaGraphsResult g = ComputeCudaGraphs(*t);
  EXPECT_EQ(g.aligned, 10 * 279);
  EXPECT_EQ(g.in_ranges, 0);  // the trace has no host ranges to give
}

// A replay that differs from the eager step: one kernel added by the graph (x) and one of the
// eager step's missing (d). The longest common subsequence still gives every other kernel its
// eager counterpart, in order; x stays unattributed and is counted.
TEST(CudaGraphs, AlignmentToleratesKernelsAddedOrMissing) {
  testing::TraceFixture f;
  f.Range("eager_step_0", 0, 1000).Range("layer_0", 10, 400).Range("layer_1", 500, 900);
  TimeNs t = 20;
  for (const char* name : {"a", "b", "c"}) {
    f.Launch(name, t, t + 5, t + 1000, t + 1010);
    t += 50;
  }
  t = 510;
  for (const char* name : {"a", "b", "d"}) {
    f.Launch(name, t, t + 5, t + 1000, t + 1010);
    t += 50;
  }
  f.Api("cudaGraphLaunch", 3000, 3010, ApiKind::kRuntime, {}, 77);
  TimeNs g = 3100;
  for (const char* name : {"a", "b", "x", "c", "a", "b"}) {
    f.Kernel(name, g, g + 10, {}, 77);
    g += 20;
  }
  const Trace trace = f.Build();
  const GraphAlignment a = AlignGraphKernels(trace);
  EXPECT_EQ(a.kernels, 6);
  EXPECT_EQ(a.kernels_matched, 5);
  EXPECT_EQ(a.replays_matched, 1);
  const CudaGraphsResult r = ComputeCudaGraphs(trace);
  EXPECT_EQ(r.graph_kernels, 6);
  EXPECT_EQ(r.aligned, 5);
  const CaptureRangeRow* l0 = Row(r, "layer_0");
  const CaptureRangeRow* l1 = Row(r, "layer_1");
  ASSERT_NE(l0, nullptr);
  ASSERT_NE(l1, nullptr);
  EXPECT_EQ(l0->nodes, 3);  // a, b, c
  EXPECT_EQ(l1->nodes, 2);  // a, b (d is not in the graph)
  EXPECT_TRUE(l0->aligned);
  EXPECT_EQ(l0->eager_instances, 1);
  EXPECT_DOUBLE_EQ(l1->eager_kernels_per_instance, 3.0);
}

}  // namespace
}  // namespace sightline
