// Recorder file importer: files written with the shared format writer
// (src/shared/recorder_format.h) import with launch links, graph kernels, memops, API kinds,
// NVTX ranges, devices and drop diagnostics; a cut-off or damaged last chunk keeps the chunks
// before it; a bad header or version is a clear error.
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
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

using recfmt::RecordType;

recfmt::ApiBody Api(int64_t start, int64_t end, uint32_t corr, uint32_t name, recfmt::ApiDomain d) {
  recfmt::ApiBody a{};
  a.start_ns = start;
  a.end_ns = end;
  a.pid = 4242;
  a.tid = 7;
  a.correlation = corr;
  a.domain = static_cast<uint32_t>(d);
  a.name_string = name;
  return a;
}

recfmt::KernelBody Kernel(int64_t start, int64_t end, uint32_t corr, uint32_t name,
                          uint32_t graph_id) {
  recfmt::KernelBody k{};
  k.start_ns = start;
  k.end_ns = end;
  k.stream = 13;
  k.correlation = corr;
  k.grid_x = 132;
  k.grid_y = k.grid_z = 1;
  k.block_x = 256;
  k.block_y = k.block_z = 1;
  k.registers_per_thread = 32;
  k.static_smem_bytes = 1024;
  k.dynamic_smem_bytes = 2048;
  k.name_string = name;
  k.graph_id = graph_id;
  k.graph_node_id = graph_id ? 100 + corr : 0;
  return k;
}

// First chunk: process, device, strings, a kernel launch, a graph launch of two kernels, copies.
// Second chunk: NVTX ranges, a driver call, drops, the end record.
std::string FirstChunk() {
  recfmt::ChunkBuilder c;
  c.AddString(1, "/usr/bin/decode");
  c.AddString(2, "gpu-host");
  c.AddString(3, "NVIDIA H100 80GB HBM3");
  c.AddString(4, "void gemm<float>(float*, int)");
  c.AddString(5, "cudaLaunchKernel");
  c.AddString(6, "cudaGraphLaunch");
  c.AddString(7, "graph_kernel_a");
  c.AddString(8, "cudaMemcpyAsync");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  p.rank = 1;
  p.world_size = 2;
  p.executable_string = 1;
  p.hostname_string = 2;
  c.Add(RecordType::kProcess, p);
  recfmt::DeviceBody d{};
  d.id = 0;
  d.sm_count = 132;
  d.cc_major = 9;
  d.name_string = 3;
  c.Add(RecordType::kDevice, d);
  c.Add(RecordType::kApi, Api(1000, 1100, 10, 5, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(1200, 1700, 10, 4, 0));
  c.Add(RecordType::kApi, Api(2000, 2100, 11, 6, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(2200, 2300, 11, 7, 5));
  c.Add(RecordType::kKernel, Kernel(2300, 2450, 11, 7, 5));
  c.Add(RecordType::kApi, Api(3000, 3050, 12, 8, recfmt::ApiDomain::kRuntime));
  recfmt::MemcpyBody m{};
  m.start_ns = 3100;
  m.end_ns = 3200;
  m.bytes = 4096;
  m.correlation = 12;
  m.copy_kind = 1;  // HtoD
  m.src_kind = 2;   // pinned
  m.dst_kind = 3;   // device
  c.Add(RecordType::kMemcpy, m);
  recfmt::MemsetBody s{};
  s.start_ns = 3300;
  s.end_ns = 3310;
  s.bytes = 4;
  s.correlation = 99;  // its call was not recorded
  s.memory_kind = 3;
  c.Add(RecordType::kMemset, s);
  return c.Finish();
}

std::string SecondChunk(bool with_end) {
  recfmt::ChunkBuilder c;
  c.AddString(9, "iteration 0");
  c.AddString(10, "cuCtxSynchronize");
  c.AddString(11, "sightline");
  recfmt::RangeBody r{};
  r.start_ns = 900;
  r.end_ns = 3500;
  r.pid = 4242;
  r.tid = r.end_tid = 7;
  r.name_string = 9;
  r.domain_string = 11;
  r.kind = static_cast<uint32_t>(recfmt::RangeKind::kPushPop);
  c.Add(RecordType::kRange, r);
  c.Add(RecordType::kApi, Api(3600, 3900, 13, 10, recfmt::ApiDomain::kDriver));
  recfmt::SyncBody sync{};
  sync.start_ns = 3600;
  sync.end_ns = 3900;
  sync.correlation = 13;
  c.Add(RecordType::kSync, sync);
  recfmt::DropsBody drops{};
  drops.cupti_dropped_records = 3;
  drops.queue_dropped_records = 2;
  drops.unpaired_ranges = 1;
  c.Add(RecordType::kDrops, drops);
  if (with_end) {
    recfmt::EndBody end{};
    end.records_written = 20;
    c.Add(RecordType::kEnd, end);
  }
  return c.Finish();
}

std::string WholeFile() { return recfmt::FileHeaderBytes() + FirstChunk() + SecondChunk(true); }

const Diagnostic* FindDiag(const Trace& t, DiagCode code) {
  for (const Diagnostic& d : t.diagnostics.items()) {
    if (d.id == code) return &d;
  }
  return nullptr;
}

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
TEST(RecorderImporter, HugeStringIdsAreMappedNotUsedAsSizes) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaLaunchKernel");
  c.AddString(0xb5000001u, "far_kernel");
  c.AddString(0xfffffffeu, "farthest_kernel");
  c.Add(RecordType::kApi, Api(1000, 1100, 21, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(1200, 1700, 21, 0xb5000001u, 0));
  c.Add(RecordType::kApi, Api(2000, 2100, 22, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(2200, 2700, 22, 0xfffffffeu, 0));
  c.Add(RecordType::kApi, Api(3000, 3100, 23, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(3200, 3700, 23, 0xb5000002u, 0));  // never defined
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "s.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->str(t->kernels.name[0]), "far_kernel");
  EXPECT_EQ(t->str(t->kernels.name[1]), "farthest_kernel");
  EXPECT_EQ(t->str(t->kernels.name[2]), "<unnamed kernel>");
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMissingStrings), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderReservedStringId), 0);
}

// String id 0xFFFFFFFF (id + 1 wrapped to 0 once, writing out of bounds) and 0 (the empty
// string) are ids the recorder never writes: a string record of either is counted
// (recorder_reserved_string_id), not taken, and what names it is unnamed; before, 0xFFFFFFFF was
// accepted without a word.
TEST(RecorderImporter, ReservedStringIdsAreCountedNotTaken) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaLaunchKernel");
  c.AddString(0xffffffffu, "farther_kernel");
  c.AddString(0, "not_empty");
  c.Add(RecordType::kApi, Api(2000, 2100, 22, 1, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(2200, 2700, 22, 0xffffffffu, 0));
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "s.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->str(t->kernels.name[0]), "<unnamed kernel>");
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderReservedStringId), 2);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMissingStrings), 1);
}

// Thread records name the threads of API calls and ranges; a thread without one keeps no name.
TEST(RecorderImporter, ThreadRecordsNameThreads) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "cudaLaunchKernel");
  c.AddString(2, "python3");
  c.AddString(3, "responder");
  c.AddString(4, "respond");
  recfmt::ThreadBody main{};
  main.pid = 4242;
  main.tid = 4242;
  main.name_string = 2;
  c.Add(RecordType::kThread, main);
  recfmt::ApiBody api = Api(1000, 1100, 21, 1, recfmt::ApiDomain::kRuntime);
  api.tid = 4242;
  c.Add(RecordType::kApi, api);
  recfmt::ThreadBody responder{};
  responder.pid = 4242;
  responder.tid = 4250;
  responder.name_string = 3;
  c.Add(RecordType::kThread, responder);
  recfmt::RangeBody r{};
  r.start_ns = 900;
  r.end_ns = 3500;
  r.pid = 4242;
  r.tid = r.end_tid = 4250;
  r.name_string = 4;
  c.Add(RecordType::kRange, r);
  recfmt::RangeBody unnamed = r;
  unnamed.tid = unnamed.end_tid = 4251;
  c.Add(RecordType::kRange, unnamed);
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "t.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto name_of = [&](int32_t tid) -> std::string {
    for (const ThreadInfo& x : t->threads) {
      if (x.pid == 4242 && x.tid == tid) return x.name;
    }
    return "<absent>";
  };
  EXPECT_EQ(name_of(4242), "python3");
  EXPECT_EQ(name_of(4250), "responder");
  EXPECT_NE(name_of(4251), "responder");
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderUnknownRecords), 0);
}

// GPU metrics (--gpu-metrics): a sample's values land in the counters under the metric records'
// names, its GPU-clock time moved onto the CUPTI clock of the other records; metrics the GPU
// could not sample, a device PM sampling refused and lost samples are diagnostics.
std::string MetricSample(int64_t start, uint32_t device, std::vector<double> values,
                         uint32_t count) {
  recfmt::GpuMetricSampleHeader h{};
  h.start_ns = start;
  h.end_ns = start + 100'000;
  h.device = device;
  h.count = count;
  std::string body(reinterpret_cast<const char*>(&h), sizeof h);
  body.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  return body;
}

TEST(RecorderImporter, GpuMetricSamplesBecomeCounters) {
  constexpr int64_t kCupti = 5'000'000, kRealtime = 1'764'000'000'000'000'000;
  recfmt::ChunkBuilder c;
  c.AddString(1, "SMs Active [Throughput %]");
  c.AddString(2, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
  c.AddString(3, "DRAM Read Bandwidth [Throughput %]");
  c.AddString(4, "dram__read_throughput.avg.pct_of_peak_sustained_elapsed");
  c.AddString(5, "NVLink RX Responses User Data [Throughput %]");
  c.AddString(6, "not available on GH100: CUPTI_ERROR_UNKNOWN (999)");
  c.AddString(7, "cuptiPmSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  p.start_cupti_ns = kCupti;
  p.start_realtime_ns = kRealtime;
  c.Add(RecordType::kProcess, p);
  auto metric = [&](uint32_t index, uint32_t name, uint32_t cupti, uint32_t reason) {
    recfmt::GpuMetricBody m{};
    m.device = 0;
    m.index = index;
    m.name_string = name;
    m.cupti_string = cupti;
    m.reason_string = reason;
    c.Add(RecordType::kGpuMetric, m);
  };
  metric(0, 1, 2, 0);
  metric(1, 3, 4, 0);
  metric(recfmt::kNotSampled, 5, 0, 6);
  // GPU times: the host's real-time clock; 1 ms and 1.1 ms after the process record on it.
  const int64_t gpu0 = kRealtime + 1'000'000;
  for (int i = 0; i < 2; ++i) {
    const std::string b = MetricSample(gpu0 + i * 100'000, 0, {40.0 + i, 7.5}, 2);
    c.AddRaw(RecordType::kGpuMetricSample, b.data(), b.size());
  }
  const std::string too_many = MetricSample(gpu0 + 200'000, 0, {1, 2, 3}, 3);
  c.AddRaw(RecordType::kGpuMetricSample, too_many.data(), too_many.size());
  const std::string cut = MetricSample(gpu0 + 300'000, 0, {1}, 2);  // says 2 values, holds 1
  c.AddRaw(RecordType::kGpuMetricSample, cut.data(), cut.size());
  recfmt::GpuMetricsStatusBody ok{};
  ok.device = 0;
  ok.interval_ns = 100'000;
  ok.samples = 2;
  ok.overflows = 1;
  ok.failed_samples = 2;
  ok.metrics = 2;
  c.Add(RecordType::kGpuMetricsStatus, ok);
  recfmt::GpuMetricsStatusBody refused{};
  refused.device = 1;
  refused.error_string = 7;
  c.Add(RecordType::kGpuMetricsStatus, refused);
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "m.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();

  const CounterTable& k = t->counters;
  ASSERT_EQ(k.size(), 4u);
  std::map<std::string, std::vector<std::pair<TimeNs, double>>> by_name;
  for (size_t i = 0; i < k.size(); ++i) {
    EXPECT_EQ(k.device[i], 0);
    by_name[std::string(t->str(k.name[i]))].push_back({k.time_ns[i], k.value[i]});
  }
  ASSERT_EQ(by_name.size(), 2u);
  const auto& sm = by_name["SMs Active [Throughput %]"];
  ASSERT_EQ(sm.size(), 2u);
  EXPECT_EQ(sm[0].first, kCupti + 1'000'000);
  EXPECT_EQ(sm[1].first, kCupti + 1'100'000);
  EXPECT_DOUBLE_EQ(sm[0].second, 40.0);
  EXPECT_DOUBLE_EQ(sm[1].second, 41.0);
  EXPECT_DOUBLE_EQ(by_name["DRAM Read Bandwidth [Throughput %]"][1].second, 7.5);

  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderGpuMetricsNotSampled), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderGpuMetricsFailed), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderGpuMetricsLost), 3);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMalformedRecords), 2);
  bool named = false;
  for (const Diagnostic& d : t->diagnostics.items()) {
    if (d.id == DiagCode::kRecorderGpuMetricsFailed) {
      named = d.detail.find("INSUFFICIENT_PRIVILEGES") != std::string::npos;
    }
  }
  EXPECT_TRUE(named);
}

// --cuda-memory-usage: allocations and releases (sign from the operation), static symbols, the
// allocating library, pools with their size after each operation; pool records change only a
// pool's size; records with an unknown operation are malformed, not guessed.
TEST(RecorderImporter, MemoryRecordsBecomeMemoryEvents) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "g_static_table");
  c.AddString(2, "/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  c.Add(RecordType::kProcess, p);
  auto mem = [&](int64_t t, uint32_t op, uint64_t address, uint64_t bytes, uint32_t kind) {
    recfmt::MemoryBody m{};
    m.time_ns = t;
    m.pid = 4242;
    m.device = 1;
    m.operation = op;
    m.address = address;
    m.bytes = bytes;
    m.memory_kind = kind;
    m.correlation = 77;
    return m;
  };
  recfmt::MemoryBody st = mem(100, 1, 0x10, 1 << 20, 6);  // static device memory
  st.name_string = 1;
  c.Add(RecordType::kMemory, st);
  recfmt::MemoryBody nccl = mem(200, 1, 0x20, 4 << 20, 3);
  nccl.source_string = 2;
  c.Add(RecordType::kMemory, nccl);
  recfmt::MemoryBody pooled = mem(300, 1, 0x30, 2 << 20, 3);
  pooled.pool_type = 1;
  pooled.pool_address = 0x9000;
  pooled.pool_size = 32 << 20;
  c.Add(RecordType::kMemory, pooled);
  c.Add(RecordType::kMemory, mem(400, 2, 0x20, 4 << 20, 3));
  c.Add(RecordType::kMemory, mem(450, 9, 0x20, 4 << 20, 3));  // no such operation
  recfmt::MemoryPoolBody trim{};
  trim.time_ns = 500;
  trim.pid = 4242;
  trim.device = 1;
  trim.address = 0x9000;
  trim.operation = 3;
  trim.pool_type = 1;
  trim.size = 2 << 20;
  c.Add(RecordType::kMemoryPool, trim);
  c.Add(RecordType::kEnd, recfmt::EndBody{});
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "mem.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const MemoryEventTable& m = t->memory_events;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m.bytes[0], 1 << 20);
  EXPECT_EQ(t->str(m.name[0]), "g_static_table");
  EXPECT_EQ(m.kind[0], MemoryKind::kDevice);
  EXPECT_EQ(m.device[0], 1);
  EXPECT_EQ(m.pid[0], 4242);
  EXPECT_EQ(m.correlation[0], 77);
  EXPECT_EQ(t->str(m.source[1]), "/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  EXPECT_EQ(m.pool[1], 0u);
  EXPECT_EQ(m.pool[2], 0x9000u);
  EXPECT_EQ(m.pool_size[2], 32 << 20);
  EXPECT_EQ(m.bytes[3], -(4 << 20));
  EXPECT_EQ(m.bytes[4], 0);  // the trim: a pool's new size only
  EXPECT_EQ(m.address[4], 0u);
  EXPECT_EQ(m.pool[4], 0x9000u);
  EXPECT_EQ(m.pool_size[4], 2 << 20);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderMalformedRecords), 1);
}

TEST(RecorderImporter, TruncatedLastChunkKeepsEarlierChunks) {
  const std::string whole = WholeFile();
  const size_t second = recfmt::FileHeaderBytes().size() + FirstChunk().size();
  for (size_t cut : {second + 5, second + 40, whole.size() - 1}) {
    StatusOr<Trace> t = ImportRecorderBytes(std::string_view(whole).substr(0, cut), "cut.slrec");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->kernels.size(), 3u) << cut;
    EXPECT_EQ(t->ranges.size(), 0u) << cut;
    EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderTruncatedChunks), 1) << cut;
  }
}

TEST(RecorderImporter, DamagedChunkStopsReading) {
  std::string bytes = WholeFile();
  bytes[recfmt::FileHeaderBytes().size() + FirstChunk().size() + 40] ^= 0x5a;  // in chunk 2
  StatusOr<Trace> t = ImportRecorderBytes(bytes, "bad.slrec");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->api_calls.size(), 3u);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderTruncatedChunks), 1);
}

TEST(RecorderImporter, MissingEndRecordIsReported) {
  StatusOr<Trace> t = ImportRecorderBytes(
      recfmt::FileHeaderBytes() + FirstChunk() + SecondChunk(false), "noend.slrec");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderNotFinished), 1);
}

TEST(RecorderImporter, UnknownRecordTypesAndLongerBodiesAreSkipped) {
  recfmt::ChunkBuilder c;
  c.AddString(1, "k");
  const char future[24] = {1, 2, 3};
  c.AddRaw(static_cast<RecordType>(999), future, sizeof future);
  // A kernel body from a newer writer with extra trailing fields.
  std::string longer(sizeof(recfmt::KernelBody) + 16, '\0');
  const recfmt::KernelBody k = Kernel(10, 20, 1, 1, 0);
  std::memcpy(longer.data(), &k, sizeof k);
  c.AddRaw(RecordType::kKernel, longer.data(), longer.size());
  StatusOr<Trace> t = ImportRecorderBytes(recfmt::FileHeaderBytes() + c.Finish(), "new.slrec");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->kernels.dur_ns(0), 10);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderUnknownRecords), 1);
}

TEST(RecorderImporter, BadHeaderAndVersionAreClearErrors) {
  std::string bytes = WholeFile();
  bytes[8] = 99;  // version 99
  StatusOr<Trace> t = ImportRecorderBytes(bytes, "v99.slrec");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(t.status().message().find("v99.slrec"), std::string::npos);
  EXPECT_NE(t.status().message().find("version 99"), std::string::npos);

  StatusOr<Trace> short_file = ImportRecorderBytes("SLRECORD\x01", "short.slrec");
  ASSERT_FALSE(short_file.ok());
  EXPECT_NE(short_file.status().message().find("short.slrec"), std::string::npos);
}

TEST(RecorderImporter, RegistrySniffsTheMagic) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/trace.bin";  // the name does not matter, the bytes do
  std::ofstream(path, std::ios::binary) << WholeFile();
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->source.format, "sightline-recorder");
  EXPECT_EQ(t->kernels.size(), 3u);

  std::string corrupt = WholeFile();
  corrupt[0] = 'X';  // no longer the magic: no importer claims it
  std::ofstream(path, std::ios::binary | std::ios::trunc) << corrupt;
  StatusOr<Trace> bad = ImportTrace(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a format Sightline reads"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(RecorderImporter, AnalyzeShowsDropDiagnostics) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/run.slrec";
  std::ofstream(path, std::ios::binary) << WholeFile();
  testing::CliResult r = testing::RunSightline("analyze --format json '" + path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(Info(DiagCode::kRecorderDroppedRecords).code), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A real recording of cuda/recorder/tools/apps/recorder_test_app (200 iterations on an H100,
// recorded by run_on_gpu.sh): 5 kernels per iteration, 2 of them from a CUDA graph, every one
// linked to its call.
TEST(RecorderImporter, RealH100Recording) {
  StatusOr<Trace> t = ImportTrace(std::string(SIGHTLINE_SOURCE_DIR) +
                                  "/tests/data/recorder/recorder_test_app_h100.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 1000u);
  int graph_kernels = 0;
  for (size_t i = 0; i < t->kernels.size(); ++i) {
    ASSERT_NE(t->kernels.launch_call[i], kNoRow) << i;
    const std::string_view call = t->str(t->api_calls.name[t->kernels.launch_call[i]]);
    if (call == "cudaGraphLaunch") ++graph_kernels;
  }
  EXPECT_EQ(graph_kernels, 400);
  EXPECT_EQ(t->memops.size(), 401u);  // a copy and a memset per iteration, one memset before
  ASSERT_EQ(t->devices.size(), 1u);
  EXPECT_EQ(t->devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t->devices[0].sm_count, 132);
  int iterations = 0;
  for (size_t i = 0; i < t->ranges.size(); ++i) {
    if (t->str(t->ranges.name[i]).starts_with("iteration ")) ++iterations;
  }
  EXPECT_EQ(iterations, 200);
  EXPECT_TRUE(t->diagnostics.items().empty() ||
              t->diagnostics.Count(DiagCode::kRecorderDroppedRecords) == 0);
  // Recorded before graph node records were written: its graph kernels have no capture.
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kGraphKernelsWithoutCapture), 400);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// The samples' clock against the kernels': GR Active made from known busy time, seen through a
// clock that is off by a known amount, gives that amount back; a GPU busy throughout gives no
// verdict; samples already in place stay where they are.
std::vector<MetricAlignSample> SamplesOf(const std::vector<std::pair<TimeNs, TimeNs>>& busy,
                                         DurationNs clock_error) {
  std::vector<MetricAlignSample> out;
  for (TimeNs t = 0; t < 50'000'000; t += 100'000) {
    DurationNs covered = 0;
    for (const auto& [s, e] : busy) {
      covered += std::max<DurationNs>(
          0, std::min(e, t + clock_error + 100'000) - std::max(s, t + clock_error));
    }
    out.push_back({t, t + 100'000, 100.0 * static_cast<double>(covered) / 100'000});
  }
  return out;
}

TEST(GpuMetricsAlign, FindsTheClockError) {
  std::vector<std::pair<TimeNs, TimeNs>> busy;
  for (TimeNs k = 0; k < 10; ++k)
    busy.push_back({k * 5'000'000 + 370'000, k * 5'000'000 + 2'913'000});
  const MetricAlignment a = AlignMetricSamples(busy, SamplesOf(busy, 731'000));
  ASSERT_TRUE(a.checked);
  EXPECT_NEAR(static_cast<double>(a.shift_ns), 731'000, 1'000);
  EXPECT_LT(a.error_after, 0.01 * a.error_before);

  const MetricAlignment same = AlignMetricSamples(busy, SamplesOf(busy, 0));
  ASSERT_TRUE(same.checked);
  EXPECT_EQ(same.shift_ns, 0);
  EXPECT_NEAR(static_cast<double>(same.best_ns), 0, 1'000);

  const std::vector<std::pair<TimeNs, TimeNs>> always = {{-1'000'000, 60'000'000}};
  EXPECT_FALSE(AlignMetricSamples(always, SamplesOf(always, 731'000)).checked);
}

}  // namespace
}  // namespace sightline
