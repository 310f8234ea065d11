// Recorder file importer: files written with the shared format writer
// (src/shared/recorder_format.h) import with launch links, graph kernels, memops, API kinds,
// NVTX ranges and devices; whole graphs and graph node records give graph kernels their capture.
// Threads, GPU metrics, memory, damaged files and the real recording: recorder_records_test.cc.
#include "importers/recorder/recorder_importer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "importers/importer.h"
#include "importers/recorder/gpu_metrics_align.h"
#include "recorder_test_chunks.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

using namespace recorder_test;  // NOLINT(build/namespaces)

TEST(RecorderFormat, Crc32MatchesZlib) {
  EXPECT_EQ(recfmt::Crc32("123456789", 9), 0xcbf43926u);  // the standard check value
}

TEST(RecorderImporter, ImportsAllRecordKinds) {
  StatusOr<Trace> t = ImportRecorderBytes(WholeFile(), "x.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->source.format, "sightline-recorder");
  EXPECT_EQ(t->source.rank, 1);
  EXPECT_EQ(t->source.world_size, 2);
  EXPECT_EQ(t->source.host, "gpu-host");  // ranks of one host share a clock (ranks analysis)
  ASSERT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->str(t->kernels.name[0]), "void gemm<float>(float*, int)");
  EXPECT_EQ(t->str(t->kernels.short_name[0]), "gemm");
  EXPECT_EQ(t->kernels.grid[0], (Dim3{132, 1, 1}));
  EXPECT_EQ(t->kernels.block[0], (Dim3{256, 1, 1}));
  EXPECT_EQ(t->kernels.registers_per_thread[0], 32);
  EXPECT_EQ(t->kernels.static_smem_bytes[0], 1024);
  EXPECT_EQ(t->kernels.dynamic_smem_bytes[0], 2048);
  EXPECT_EQ(t->kernels.stream[0], 13);
  EXPECT_EQ(t->kernels.pid[0], 4242);
  // Both graph kernels link to the one cudaGraphLaunch call.
  for (size_t i = 1; i < 3; ++i) {
    ASSERT_NE(t->kernels.launch_call[i], kNoRow);
    EXPECT_EQ(t->str(t->api_calls.name[t->kernels.launch_call[i]]), "cudaGraphLaunch");
  }
  ASSERT_EQ(t->memops.size(), 2u);
  EXPECT_EQ(t->memops.kind[0], MemOpKind::kHtoD);
  EXPECT_EQ(t->memops.src_kind[0], MemoryKind::kPinned);
  EXPECT_EQ(t->memops.dst_kind[0], MemoryKind::kDevice);
  EXPECT_EQ(t->memops.size_bytes[0], 4096);
  EXPECT_NE(t->memops.launch_call[0], kNoRow);
  EXPECT_EQ(t->memops.kind[1], MemOpKind::kMemset);
  ASSERT_EQ(t->api_calls.size(), 4u);
  EXPECT_EQ(t->api_calls.kind[3], ApiKind::kDriver);
  EXPECT_EQ(t->api_calls.api_class[3], ApiClass::kSync);
  EXPECT_EQ(t->api_calls.api_class[0], ApiClass::kLaunch);
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->str(t->ranges.name[0]), "iteration 0");
  EXPECT_EQ(t->str(t->ranges.domain[0]), "sightline");
  EXPECT_EQ(t->ranges.kind[0], RangeKind::kNvtxPushPop);
  ASSERT_EQ(t->devices.size(), 1u);
  EXPECT_EQ(t->devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t->devices[0].sm_count, 132);
  ASSERT_EQ(t->processes.size(), 1u);
  EXPECT_EQ(t->processes[0].name, "decode");
  const Diagnostic* dropped = FindDiag(*t, DiagCode::kRecorderDroppedRecords);
  ASSERT_NE(dropped, nullptr);
  EXPECT_EQ(dropped->count, 5);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderUnpairedRanges), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderSyncRecords), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderTruncatedChunks), 0);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderNotFinished), 0);
}

// --cuda-graph-trace graph: a graph's run is one record; it becomes one row on its stream, linked
// to its cudaGraphLaunch, with GPU time for the analyses, and an info diagnostic says so.
TEST(RecorderImporter, WholeGraphRunsBecomeOneRowEach) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaGraphLaunch");
  c.Add(RecordType::kApi, Api(1000, 1100, 21, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kApi, Api(5000, 5100, 22, 1, recfmt::ApiDomain::kRuntime));
  for (uint32_t corr : {21u, 22u}) {
    recfmt::GraphBody g{};
    g.start_ns = corr == 21 ? 1200 : 5200;
    g.end_ns = g.start_ns + 3000;
    g.stream = 7;
    g.correlation = corr;
    g.graph_id = 3;
    c.Add(RecordType::kGraph, g);
  }
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "g.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(t->str(t->kernels.short_name[i]), "CUDA graph 3 (whole graph)");
    EXPECT_EQ(t->kernels.end_ns[i] - t->kernels.start_ns[i], 3000);
    EXPECT_EQ(t->kernels.stream[i], 7);
    ASSERT_NE(t->kernels.launch_call[i], kNoRow);
    EXPECT_EQ(t->api_calls.correlation[t->kernels.launch_call[i]], i == 0 ? 21 : 22);
  }
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kWholeGraphRuns), 2);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderUnknownRecords), 0);
}

// Graph node records (issue 29): a graph kernel's node is a clone made at instantiation; its
// original is the node the capture created, whose time and thread become the kernel's capture
// columns. Node records may follow the kernels. A kernel whose node has no record keeps no capture
// and is counted; a node id 0 is malformed, an unknown event is skipped, a cycle of originals ends.
TEST(RecorderImporter, GraphNodeRecordsGiveGraphKernelsTheirCapture) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaGraphLaunch");
  c.AddString(2, "graph_kernel");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  c.Add(RecordType::kProcess, p);
  c.Add(RecordType::kApi, Api(10'000, 10'100, 21, 1, recfmt::ApiDomain::kRuntime));
  const uint64_t kernel_nodes[] = {501, 502, 503, 601};
  int64_t start = 10'200;
  for (uint64_t node : kernel_nodes) {
    recfmt::KernelBody k = Kernel(start, start + 50, 21, 2, 3);
    k.graph_node_id = node;
    c.Add(RecordType::kKernel, k);
    start += 100;
  }
  auto node = [&](uint64_t id, uint64_t original, int64_t t, uint32_t tid, uint32_t event) {
    recfmt::GraphNodeBody n{};
    n.time_ns = t;
    n.node_id = id;
    n.original_node_id = original;
    n.pid = 4242;
    n.tid = tid;
    n.event = event;
    c.Add(RecordType::kGraphNode, n);
  };
  const uint32_t created = static_cast<uint32_t>(recfmt::GraphNodeEvent::kCreated);
  const uint32_t cloned = static_cast<uint32_t>(recfmt::GraphNodeEvent::kCloned);
  node(401, 0, 100, 9, created);  // captured on thread 9
  node(402, 0, 200, 9, created);
  node(501, 0, 900, 11, created);  // instantiated on thread 11: created, then cloned from 401
  node(501, 401, 901, 11, cloned);
  node(502, 402, 902, 11, cloned);  // cloned only
  node(601, 602, 950, 11, cloned);  // a cycle (damaged file): ends after a few hops
  node(602, 601, 951, 11, cloned);
  node(0, 401, 960, 11, cloned);  // malformed
  node(701, 0, 970, 11, 99);      // an event a later writer added: skipped
  recfmt::DropsBody drops{};
  drops.graph_node_dropped_records = 4;
  c.Add(RecordType::kDrops, drops);
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "n.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 4u);
  const KernelTable& k = t->kernels;
  // Sorted by start: nodes 501, 502, 503, 601.
  EXPECT_EQ(k.graph_node[0], 501);
  EXPECT_EQ(k.capture_node[0], 401);
  EXPECT_EQ(k.capture_ns[0], 100);
  EXPECT_EQ(k.capture_pid[0], 4242);
  EXPECT_EQ(k.capture_tid[0], 9);
  EXPECT_EQ(k.capture_node[1], 402);
  EXPECT_EQ(k.capture_ns[1], 200);
  EXPECT_EQ(k.capture_node[2], 0);  // no record of node 503
  EXPECT_EQ(k.capture_ns[2], -1);
  EXPECT_EQ(k.capture_tid[2], -1);
  EXPECT_TRUE(k.capture_node[3] == 601 || k.capture_node[3] == 602);
  for (size_t i = 0; i < 4; ++i) EXPECT_NE(k.launch_call[i], kNoRow) << i;
  const Diagnostic* missing = FindDiag(*t, DiagCode::kGraphKernelsWithoutCapture);
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->count, 1);
  EXPECT_NE(missing->detail.find("1 of 4 graph kernels"), std::string::npos) << missing->detail;
  EXPECT_NE(missing->detail.find("4 were dropped"), std::string::npos) << missing->detail;
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMalformedRecords), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderUnknownRecords), 1);
}

// Graph creation records (issue 29): a .slrec traced whole-graph (--cuda-graph-trace graph) pairs
// each graph with its own capture by the graph's creation, as nsys's CUDA_GRAPH_EVENTS do. Two
// captures (buckets of 8 and 4 sequences, largest first), one replayed graph: pairing by order
// cannot tell which capture made it; the creations can. The records as CUPTI gave them on an H200
// (docs/evidence/cuda-graphs/serve/): capture 1 creates graph 1; instantiating it creates graphs
// 2 and 3 and executable graph 2, and the runs carry id 2. So executable 2 takes graph 1's
// creation (not the driver's creation of graph 2 at instantiation); a clone (cudaGraphClone) its
// original's; a clone of an unknown graph gets none; a creation without a graph id is malformed,
// an unknown event skipped.
TEST(RecorderImporter, GraphCreationRecordsPairWholeGraphsWithTheirCapture) {
  recfmt::ChunkBuilder c;
  const char* names[] = {"cudaStreamBeginCapture",
                         "cudaStreamEndCapture",
                         "cudaLaunchKernel",
                         "cudaGraphLaunch",
                         "capture_bs8",
                         "capture_bs4",
                         "layer_0",
                         "eager_step_0",
                         "gemm",
                         "norm"};
  for (uint32_t i = 0; i < 10; ++i) c.AddString(i + 1, names[i]);
  recfmt::ProcessBody p{};
  p.pid = 4242;
  c.Add(RecordType::kProcess, p);
  auto range = [&](uint32_t name, int64_t start, int64_t end) {
    recfmt::RangeBody r{};
    r.start_ns = start;
    r.end_ns = end;
    r.pid = 4242;
    r.tid = r.end_tid = 7;
    r.name_string = name;
    r.kind = static_cast<uint32_t>(recfmt::RangeKind::kPushPop);
    c.Add(RecordType::kRange, r);
  };
  auto event = [&](int64_t t, uint32_t graph, uint32_t original, uint32_t exec, uint32_t kind) {
    recfmt::GraphEventBody e{};
    e.time_ns = t;
    e.pid = 4242;
    e.tid = 7;
    e.graph_id = graph;
    e.original_graph_id = original;
    e.graph_exec_id = exec;
    e.event = kind;
    c.Add(RecordType::kGraphEvent, e);
  };
  const uint32_t created = static_cast<uint32_t>(recfmt::GraphEvent::kCreated);
  const uint32_t cloned = static_cast<uint32_t>(recfmt::GraphEvent::kCloned);
  const uint32_t exec = static_cast<uint32_t>(recfmt::GraphEvent::kExecCreated);
  uint32_t corr = 1;
  for (uint32_t cap = 0; cap < 2; ++cap) {  // graph 1 in capture_bs8, graph 4 in capture_bs4
    const int64_t base = 1'000 + cap * 1'000;
    const uint32_t graph = 1 + 3 * cap;
    range(5 + cap, base, base + 300);
    c.Add(RecordType::kApi, Api(base + 5, base + 10, corr++, 1, recfmt::ApiDomain::kRuntime));
    event(base + 8, graph, 0, 0, created);
    range(7, base + 20, base + 200);
    c.Add(RecordType::kApi, Api(base + 30, base + 35, corr++, 3, recfmt::ApiDomain::kRuntime));
    c.Add(RecordType::kApi, Api(base + 40, base + 45, corr++, 3, recfmt::ApiDomain::kRuntime));
    c.Add(RecordType::kApi, Api(base + 250, base + 260, corr++, 2, recfmt::ApiDomain::kRuntime));
    event(base + 270, graph + 1, 0, 0, created);  // the driver's, at instantiation
    event(base + 275, graph + 2, 0, 0, created);
    event(base + 280, graph, 0, graph + 1, exec);  // executable graph + 1 from graph
  }
  event(2'800, 20, 4, 0, cloned);      // cudaGraphClone of graph 4
  event(2'900, 30, 29, 0, cloned);     // the original is not in the file
  event(2'950, 0, 0, 0, created);      // malformed
  event(2'955, 7, 0, 0, exec);         // malformed: no executable graph id
  event(2'960, 40, 0, 0, 99);          // an event a later writer added
  for (int run = 0; run < 3; ++run) {  // executable graph 5 (of graph 4) replayed 3 times
    const int64_t base = 5'000 + run * 1'000;
    c.Add(RecordType::kApi, Api(base, base + 10, 100 + run, 4, recfmt::ApiDomain::kRuntime));
    recfmt::GraphBody g{};
    g.start_ns = base + 20;
    g.end_ns = base + 120;
    g.correlation = 100 + run;
    g.graph_id = 5;
    c.Add(RecordType::kGraph, g);
  }
  range(8, 20'000, 20'500);  // the step run eagerly
  range(7, 20'010, 20'400);
  c.Add(RecordType::kApi, Api(20'020, 20'025, 200, 3, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(20'030, 20'070, 200, 9, 0));
  c.Add(RecordType::kApi, Api(20'030, 20'035, 201, 3, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(20'070, 20'080, 201, 10, 0));
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "g.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();

  // Graphs 1 and 4 as captured; executables 2 and 5 and the clone 20 with their graphs' creations;
  // 3 and 6 as the driver created them; 30 none.
  std::map<int64_t, std::vector<GraphCreation>> by_id;
  for (const GraphCreation& g : t->graph_creations) by_id[g.graph_id].push_back(g);
  ASSERT_EQ(by_id.size(), 7u);
  for (const auto& [id, records] : by_id) EXPECT_EQ(records.size(), 1u) << id;
  EXPECT_EQ(by_id[1][0].time_ns, 1'008);
  EXPECT_EQ(by_id[2][0].time_ns, 1'008);
  EXPECT_EQ(by_id[3][0].time_ns, 1'275);
  EXPECT_EQ(by_id[4][0].time_ns, 2'008);
  EXPECT_EQ(by_id[5][0].time_ns, 2'008);
  EXPECT_EQ(by_id[5][0].pid, 4242);
  EXPECT_EQ(by_id[5][0].tid, 7);
  EXPECT_EQ(by_id[20][0].time_ns, 2'008);
  EXPECT_EQ(by_id.count(30), 0u);
  EXPECT_TRUE(std::is_sorted(
      t->graph_creations.begin(), t->graph_creations.end(),
      [](const GraphCreation& a, const GraphCreation& b) { return a.time_ns < b.time_ns; }));
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMalformedRecords), 2);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderUnknownRecords), 1);

  // What the whole-graph estimate makes of them (each graph with its own capture) is the analyses'
  // business: GraphServe.RecorderWholeGraphsPairWithTheirOwnCaptureByCreation, on a recording of
  // four buckets (tests/analyses/graph_serve_test.cc).
}

// --cuda-graph-trace sampled:N: one launch traced node by node (its kernels, attributed to the
// capture), the others as whole-graph rows; an info diagnostic says how many each way, from the
// records.
TEST(RecorderImporter, SampledGraphTraceSaysWhichLaunchesWereNodeTraced) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaGraphLaunch");
  c.AddString(2, "graph_kernel");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  p.graph_trace_sample = 3;
  c.Add(RecordType::kProcess, p);
  recfmt::GraphNodeBody n{};
  n.node_id = 401;
  n.pid = 4242;
  n.tid = 7;
  n.time_ns = 50;
  n.event = static_cast<uint32_t>(recfmt::GraphNodeEvent::kCreated);
  c.Add(RecordType::kGraphNode, n);
  for (uint32_t corr : {31u, 32u, 33u}) {
    const int64_t t = 1000 * corr;
    c.Add(RecordType::kApi, Api(t, t + 100, corr, 1, recfmt::ApiDomain::kRuntime));
    if (corr == 31) {
      recfmt::KernelBody k = Kernel(t + 200, t + 300, corr, 2, 3);
      k.graph_node_id = 401;
      c.Add(RecordType::kKernel, k);
    } else {
      recfmt::GraphBody g{};
      g.start_ns = t + 200;
      g.end_ns = t + 300;
      g.correlation = corr;
      g.graph_id = 3;
      c.Add(RecordType::kGraph, g);
    }
  }
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "s.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->kernels.capture_node[0], 401);
  const Diagnostic* d = FindDiag(*t, DiagCode::kRecorderSampledGraphTrace);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->count, 1);
  EXPECT_NE(d->detail.find("sampled:3: 1 graph launches traced node by node, 2 as whole graphs"),
            std::string::npos)
      << d->detail;
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kWholeGraphRuns), 2);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kGraphKernelsWithoutCapture), 0);
}

// String ids come from the file: one far beyond the strings seen (0xb5000001 sized a 48 GB table
// before, found by fuzz_recorder) still names what refers to it, and sizes nothing.

}  // namespace
}  // namespace sightline
