// CUDA graph kernels attributed to the ranges of their capture
// (analyses/cuda_graphs/cuda_graphs.h), on the graph-decode case recorded on an H100
// (examples/graph_decode/): 8 layers, NVTX ranges layer_i > attention / mlp and head around the
// code, captured once and replayed 12 times, then run eagerly 12 times. The truth comes from the
// program and from the export's own tables, joined here with SQL, not from Sightline.
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

const std::string kData = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/";

const CaptureRangeRow* Row(const CudaGraphsResult& g, const std::string& path) {
  for (const CaptureRangeRow& r : g.rows) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

// Kernels, distinct captured nodes and GPU time of the graph kernels whose node was captured
// while `outer` and `inner` were open, by SQL over the export's tables.
struct Truth {
  int64_t kernels = 0, nodes = 0, gpu_ns = 0;
};
Truth SqlTruth(const std::string& db_path, const std::string& outer, const std::string& inner) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const std::string sql =
      "WITH n AS (SELECT graphNodeId id, min(start) start, max(originalGraphNodeId) orig, "
      "max(globalTid) tid FROM CUDA_GRAPH_NODE_EVENTS GROUP BY graphNodeId), "
      "k AS (SELECT kk.start ks, kk.end ke, coalesce(n.orig, n.id) root FROM "
      "CUPTI_ACTIVITY_KIND_KERNEL kk JOIN n ON n.id = kk.graphNodeId), "
      "c AS (SELECT k.*, n2.start cs, n2.tid ct FROM k JOIN n n2 ON n2.id = k.root) "
      "SELECT count(*), count(DISTINCT root), sum(ke - ks) FROM c WHERE "
      "EXISTS (SELECT 1 FROM NVTX_EVENTS e WHERE e.text = ?1 AND e.globalTid = c.ct AND "
      "e.start <= c.cs AND c.cs < e.end) AND EXISTS (SELECT 1 FROM NVTX_EVENTS e WHERE "
      "e.text = ?2 AND e.globalTid = c.ct AND e.start <= c.cs AND c.cs < e.end)";
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_bind_text(st, 1, outer.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, inner.c_str(), -1, SQLITE_TRANSIENT);
  Truth t;
  if (sqlite3_step(st) == SQLITE_ROW) {
    t.kernels = sqlite3_column_int64(st, 0);
    t.nodes = sqlite3_column_int64(st, 1);
    t.gpu_ns = sqlite3_column_int64(st, 2);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return t;
}

// The node-traced export rewritten as the recorder writes a graph replay: kernels with their graph
// node, runtime and driver calls, NVTX push/pop ranges and, in a last chunk after every kernel,
// one graph_node record per CUDA_GRAPH_NODE_EVENTS row (created without an original, cloned with
// one), each on the thread and at the time nsys saw it. Read with SQL from the export's tables.
class SlrecFromExport {
 public:
  explicit SlrecFromExport(const std::string& db_path) {
    EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  }
  ~SlrecFromExport() { sqlite3_close(db_); }

  std::string Bytes() {
    recfmt::ChunkBuilder main;
    Each(
        "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, k.globalPid, s.value, "
        "coalesce(k.graphNodeId, 0), k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName",
        [&](sqlite3_stmt* st) {
          if (pid_ == 0) {
            recfmt::ProcessBody p{};
            p.pid = (sqlite3_column_int64(st, 5) >> 24) & 0xffffff;
            pid_ = static_cast<uint32_t>(p.pid);
            main.Add(recfmt::RecordType::kProcess, p);
          }
          recfmt::KernelBody k{};
          k.start_ns = sqlite3_column_int64(st, 0);
          k.end_ns = sqlite3_column_int64(st, 1);
          k.device = static_cast<uint32_t>(sqlite3_column_int(st, 2));
          k.stream = static_cast<uint32_t>(sqlite3_column_int(st, 3));
          k.correlation = static_cast<uint32_t>(sqlite3_column_int64(st, 4));
          k.name_string = String(main, Text(st, 6));
          k.graph_node_id = static_cast<uint64_t>(sqlite3_column_int64(st, 7));
          k.graph_id = k.graph_node_id != 0 ? 1 : 0;
          k.grid_x = sqlite3_column_int(st, 8);
          k.grid_y = sqlite3_column_int(st, 9);
          k.grid_z = sqlite3_column_int(st, 10);
          k.block_x = sqlite3_column_int(st, 11);
          k.block_y = sqlite3_column_int(st, 12);
          k.block_z = sqlite3_column_int(st, 13);
          main.Add(recfmt::RecordType::kKernel, k);
          if (k.graph_node_id != 0) ++graph_kernels_;
        });
    Each(
        "SELECT r.start, r.end, r.eventClass, r.globalTid, r.correlationId, s.value FROM "
        "CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId",
        [&](sqlite3_stmt* st) {
          recfmt::ApiBody a{};
          a.start_ns = sqlite3_column_int64(st, 0);
          a.end_ns = sqlite3_column_int64(st, 1);
          a.domain =
              static_cast<uint32_t>(sqlite3_column_int(st, 2) == 0 ? recfmt::ApiDomain::kRuntime
                                                                   : recfmt::ApiDomain::kDriver);
          Thread(sqlite3_column_int64(st, 3), &a.pid, &a.tid);
          a.correlation = static_cast<uint32_t>(sqlite3_column_int64(st, 4));
          a.name_string = String(main, Text(st, 5));
          main.Add(recfmt::RecordType::kApi, a);
        });
    Each(
        "SELECT e.start, e.end, e.globalTid, coalesce(e.text, s.value) FROM NVTX_EVENTS e LEFT "
        "JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59 AND e.end IS NOT NULL",
        [&](sqlite3_stmt* st) {
          recfmt::RangeBody r{};
          r.start_ns = sqlite3_column_int64(st, 0);
          r.end_ns = sqlite3_column_int64(st, 1);
          Thread(sqlite3_column_int64(st, 2), &r.pid, &r.tid);
          r.end_tid = r.tid;
          r.name_string = String(main, Text(st, 3));
          r.kind = static_cast<uint32_t>(recfmt::RangeKind::kPushPop);
          main.Add(recfmt::RecordType::kRange, r);
        });
    recfmt::ChunkBuilder nodes;
    Each(
        "SELECT start, globalTid, graphNodeId, originalGraphNodeId FROM CUDA_GRAPH_NODE_EVENTS "
        "ORDER BY rowid",
        [&](sqlite3_stmt* st) {
          recfmt::GraphNodeBody n{};
          n.time_ns = sqlite3_column_int64(st, 0);
          Thread(sqlite3_column_int64(st, 1), &n.pid, &n.tid);
          n.node_id = static_cast<uint64_t>(sqlite3_column_int64(st, 2));
          const bool cloned = sqlite3_column_type(st, 3) != SQLITE_NULL;
          n.original_node_id = cloned ? static_cast<uint64_t>(sqlite3_column_int64(st, 3)) : 0;
          n.event = static_cast<uint32_t>(cloned ? recfmt::GraphNodeEvent::kCloned
                                                 : recfmt::GraphNodeEvent::kCreated);
          nodes.Add(recfmt::RecordType::kGraphNode, n);
          ++node_records_;
        });
    nodes.Add(recfmt::RecordType::kEnd, recfmt::EndBody{});
    return recfmt::FileHeaderBytes() + main.Finish() + nodes.Finish();
  }

  int64_t graph_kernels() const { return graph_kernels_; }
  int64_t node_records() const { return node_records_; }

 private:
  template <typename F>
  void Each(const char* sql, F&& row) {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
    while (sqlite3_step(st) == SQLITE_ROW) row(st);
    sqlite3_finalize(st);
  }
  static std::string Text(sqlite3_stmt* st, int col) {
    const unsigned char* t = sqlite3_column_text(st, col);
    return t != nullptr ? reinterpret_cast<const char*>(t) : "";
  }
  static void Thread(int64_t global_tid, uint32_t* pid, uint32_t* tid) {
    *pid = static_cast<uint32_t>((global_tid >> 24) & 0xffffff);
    *tid = static_cast<uint32_t>(global_tid & 0xffffff);
  }
  uint32_t String(recfmt::ChunkBuilder& c, const std::string& text) {
    if (text.empty()) return recfmt::kNoString;
    auto [it, added] = strings_.try_emplace(text, static_cast<uint32_t>(strings_.size() + 1));
    if (added) c.AddString(it->second, text);
    return it->second;
  }

  sqlite3* db_ = nullptr;
  std::map<std::string, uint32_t> strings_;
  uint32_t pid_ = 0;
  int64_t graph_kernels_ = 0, node_records_ = 0;
};

std::string PlainCopy(const std::string& gz, const std::string& tag) {
  StatusOr<std::string> bytes = ReadInput(gz);
  EXPECT_TRUE(bytes.ok());
  const std::string plain = (std::filesystem::temp_directory_path() /
                             ("sightline_" + tag + "_" + std::to_string(::getpid()) + ".sqlite"))
                                .string();
  std::ofstream(plain, std::ios::binary)
      .write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  return plain;
}

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

const Finding* FindingById(const std::vector<Finding>& findings, std::string_view id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// graph_recapture: a loop that captures and instantiates a graph again in iterations after the
// first. Step 0's capture (warm-up) is left out; steps 2 and 3 capture again (a new batch size);
// the host time is each capture's span plus the instantiation after it.
TEST(CudaGraphs, RecaptureInsideTheLoopIsAFinding) {
  auto build = [](bool recapture) {
    testing::TraceFixture f;
    f.Device(0);
    for (int step = 0; step < 4; ++step) {
      const TimeNs s = step * 10'000;
      f.Range(fmt::format("ProfilerStep#{}", step), s, s + 9'999, RangeKind::kUserAnnotation);
      if (step == 0 || (recapture && step >= 2)) {
        f.Api("cudaStreamBeginCapture", s + 10, s + 20);
        f.Api("cudaLaunchKernel", s + 30, s + 40);  // captured: no kernel runs
        f.Api("cudaStreamEndCapture", s + 1'000, s + 1'100);
        f.Api("cudaGraphInstantiateWithFlags", s + 1'200, s + 3'200);
      }
      f.Api("cudaGraphLaunch", s + 4'000, s + 4'010);
      f.Launch("gemm", s + 4'020, s + 4'030, s + 4'100, s + 9'000);
    }
    return f.Build();
  };
  const Trace quiet = build(false);
  StatusOr<std::vector<Finding>> none = ComputeFindings(*testing::Ctx(quiet));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(FindingById(*none, "graph_recapture"), nullptr);  // step 0's capture is warm-up

  const Trace loud = build(true);
  StatusOr<std::vector<Finding>> found = ComputeFindings(*testing::Ctx(loud));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  const Finding* f = FindingById(*found, "graph_recapture");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);  // 2 of 3 iterations after the first
  EXPECT_EQ(f->estimated_savings_ns, 2 * ((1'100 - 10) + (3'200 - 1'200)));
  EXPECT_EQ(f->spans.size(), 4u);
  EXPECT_NE(f->title.find("2 captures and 2 instantiations in 2 of 3 iterations"),
            std::string::npos)
      << f->title;
}

// Issue 29, the recorder: a .slrec holding the same graph replay and its graph node records gives
// the NVTX projection and the cuda_graphs table the program's truth, as the nsys export does; the
// node records come after every kernel in the file. Without them, the same kernels are reported as
// lacking a capture and no range is credited through one: they reach the layers by alignment with
// the eager step instead.
TEST(CudaGraphs, RecorderNodeRecordsAttributeReplayedKernelsToTheirCaptureRanges) {
  const std::string plain = PlainCopy(kData + "nsys/graph_decode_node_h100.sqlite.gz", "slrec");
  SlrecFromExport conv(plain);
  const std::string bytes = conv.Bytes();
  std::filesystem::remove(plain);
  ASSERT_EQ(conv.graph_kernels(), 12 * 279);
  ASSERT_EQ(conv.node_records(), 850);
  StatusOr<Trace> t = ImportRecorderBytes(bytes, "graph_decode.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kGraphKernelsWithoutCapture), 0);

  const CudaGraphsResult g = ComputeCudaGraphs(*t);
  EXPECT_EQ(g.graph_kernels, 12 * 279);
  EXPECT_EQ(g.with_capture, g.graph_kernels);
  EXPECT_EQ(g.in_ranges, g.graph_kernels);
  EXPECT_EQ(g.rows.size(), 18u);
  for (int layer = 0; layer < 8; ++layer) {
    const std::string l = "capture > layer_" + std::to_string(layer);
    const CaptureRangeRow* a = Row(g, l + " > attention");
    const CaptureRangeRow* m = Row(g, l + " > mlp");
    ASSERT_NE(a, nullptr) << l;
    ASSERT_NE(m, nullptr) << l;
    EXPECT_EQ(a->nodes, 18) << l;
    EXPECT_EQ(m->nodes, 15) << l;
    EXPECT_EQ(a->kernels, 12 * 18) << l;
    EXPECT_DOUBLE_EQ(a->replays, 12.0);
    EXPECT_DOUBLE_EQ(a->eager_kernels_per_instance, 18.0) << l;
  }
  ASSERT_NE(Row(g, "capture > head"), nullptr);
  EXPECT_EQ(Row(g, "capture > head")->nodes, 13);

  StatusOr<NvtxProjectionResult> r = ComputeNvtxProjection(*testing::Ctx(*t), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->graph_kernels, 12 * 279);
  EXPECT_EQ(r->kernels_with_capture, r->graph_kernels);
  EXPECT_EQ(r->kernels_by_capture, r->graph_kernels);
  auto group = [&](const Trace& trace, const NvtxProjectionResult& p, const std::string& name,
                   int depth) -> const NvtxRangeGroup* {
    for (const NvtxRangeGroup& x : p.groups) {
      if (trace.str(x.name) == name && x.depth == depth) return &x;
    }
    return nullptr;
  };
  const NvtxRangeGroup* attention = group(*t, *r, "attention", 2);
  const NvtxRangeGroup* mlp = group(*t, *r, "mlp", 2);
  ASSERT_NE(attention, nullptr);
  ASSERT_NE(mlp, nullptr);
  // Each range name holds the replays' kernels (through the capture) and the eager steps'.
  EXPECT_EQ(attention->work.kernel_count, 2 * 12 * 8 * 18);
  EXPECT_EQ(mlp->work.kernel_count, 2 * 12 * 8 * 15);
  for (int layer = 0; layer < 8; ++layer) {
    const NvtxRangeGroup* l = group(*t, *r, "layer_" + std::to_string(layer), 1);
    ASSERT_NE(l, nullptr) << layer;
    EXPECT_EQ(l->work.kernel_count, 2 * 12 * (18 + 15)) << layer;
  }

  // The same file without its node records (a recording made before they were written).
  const std::string without = bytes.substr(
      0, bytes.size() - [&] {
        // The last chunk holds the node records and the end record: drop it.
        size_t pos = recfmt::kFileHeaderBytes, last = pos;
        while (pos < bytes.size()) {
          uint32_t size;
          std::memcpy(&size, bytes.data() + pos + 4, 4);
          last = pos;
          pos += recfmt::kChunkHeaderBytes + size;
        }
        return bytes.size() - last;
      }());
  StatusOr<Trace> old = ImportRecorderBytes(without, "old.slrec");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->diagnostics.Count(DiagCode::kGraphKernelsWithoutCapture), 12 * 279);
  const CudaGraphsResult og = ComputeCudaGraphs(*old);
  EXPECT_EQ(og.graph_kernels, 12 * 279);
  EXPECT_EQ(og.with_capture, 0);
  StatusOr<NvtxProjectionResult> o = ComputeNvtxProjection(*testing::Ctx(*old), {});
  ASSERT_TRUE(o.ok());
  // No capture point: the replays are aligned with the eager step instead, and the projection
  // takes the same ranges through their eager counterparts.
  EXPECT_EQ(o->kernels_by_capture, 0);
  EXPECT_EQ(o->kernels_by_alignment, 12 * (279 - 2));
  const NvtxRangeGroup* old_attention = group(*old, *o, "attention", 2);
  ASSERT_NE(old_attention, nullptr);
  EXPECT_EQ(old_attention->work.kernel_count, 2 * 12 * 8 * 18);
}

// The verdict's per-iteration parts (diff/step_samples.h) over the graph steps: the replayed
// kernels count in the layer that captured them (`layer_N`), below the capture's own range, not
// all in the graph launch's step; only the kernels captured outside every layer stay in (step).
TEST(CudaGraphs, StepPartsOfGraphStepsAreByTheLayerThatCaptured) {
  StatusOr<Trace> t = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  AnalyzeOptions options;
  options.iterations_regex = "graph_step_(\\d+)";
  StatusOr<RunSamples> run = CollectRunSamples(*testing::Ctx(*t, options));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->iterations(), 12u);
  double layer_gemm_ns = 0;
  for (size_t p = 0; p < run->parts.size(); ++p) {
    const StepPart& part = run->parts[p];
    if (part.kind != StepPart::Kind::kGpu) continue;
    EXPECT_NE(part.range, "capture") << part.Label();
    // The graph's GEMMs and attention kernels were all captured inside a layer; the step's own
    // eager work (input copies, sampling) stays in (step).
    if (part.range == kStepRange) {
      EXPECT_NE(part.what, "GEMM") << part.Label();
      EXPECT_NE(part.what, "attention") << part.Label();
    }
    if (part.range == "layer_N" && part.what == "GEMM") {
      for (double v : run->part_ns[p]) layer_gemm_ns += v;
    }
  }
  EXPECT_GT(layer_gemm_ns, 0);

  // Graph-mode tracing: graph launches, but whole-graph rows, no graph kernels to label.
  StatusOr<Trace> whole = ImportTrace(kData + "nsys/graph_decode_graph_h100.sqlite.gz");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  StatusOr<RunSamples> whole_run = CollectRunSamples(*testing::Ctx(*whole, options));
  ASSERT_TRUE(whole_run.ok()) << whole_run.status().ToString();
  EXPECT_EQ(whole_run->iterations(), 12u);
}

// The program's two loops, graph replays and eager steps, are both kept: the main set (eager
// steps, the longer) and the other loop, each measured, so the diff compares each on its own. A
// given regex names one loop.
TEST(CudaGraphs, BothLoopsOfTheProgramAreFound) {
  StatusOr<Trace> t = ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::shared_ptr<AnalysisContext> context = testing::Ctx(*t, AnalyzeOptions());
  StatusOr<const IterationsResult*> its = context->Iterations();
  ASSERT_TRUE(its.ok()) << its.status().ToString();
  ASSERT_EQ((*its)->sets.size(), 1u);
  EXPECT_EQ((*its)->sets[0].pattern, "eager_step_N");
  ASSERT_EQ((*its)->other_loops.size(), 1u);
  const IterationSet& graph = (*its)->other_loops[0];
  EXPECT_EQ(graph.pattern, "graph_step_N");
  ASSERT_EQ(graph.iterations.size(), 12u);
  EXPECT_EQ(graph.pid, (*its)->sets[0].pid);
  EXPECT_GT(graph.iterations[3].launched.gpu_time_ns(), 0);
  EXPECT_GT(graph.wall.count, 0);  // measured like a set, warm-up steps apart

  StatusOr<std::vector<RunSamples>> loops = CollectLoopSamples(*context);
  ASSERT_TRUE(loops.ok()) << loops.status().ToString();
  ASSERT_EQ(loops->size(), 2u);
  EXPECT_EQ((*loops)[0].pattern, "eager_step_N");
  EXPECT_EQ((*loops)[1].pattern, "graph_step_N");
  EXPECT_EQ((*loops)[1].iterations(), 12u);

  AnalyzeOptions given;
  given.iterations_regex = "graph_step_(\\d+)";
  auto given_context = testing::Ctx(*t, given);  // owns the result `one` points into
  StatusOr<const IterationsResult*> one = given_context->Iterations();
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE((*one)->other_loops.empty());
}

// The export of a capture before the recording began: the same H100 export with its node
// creation rows deleted. The importer counts the graph kernels left without a capture
// (graph_kernels_without_capture), and the cuda_graphs section matches all of them with the eager
// step instead, layer by layer.
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
