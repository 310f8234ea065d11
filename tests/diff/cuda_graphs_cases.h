// What the tests of CUDA graph attribution share (cuda_graphs_test.cc,
// cuda_graphs_loops_test.cc, cuda_graphs_whole_graph_test.cc): the graph-decode case's files, the
// truth from the export's own tables joined with SQL (SqlTruth), the export turned into a recording
// (SlrecFromExport) and a plain copy of a gzip'd export.
#pragma once

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
#include "diff/step_samples.h"
#include "facts/graph_alignment.h"
#include "importers/importer.h"
#include "importers/recorder/recorder_importer.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline::cuda_graphs_test {

const std::string kData = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/";

inline const CaptureRangeRow* Row(const CudaGraphsResult& g, const std::string& path) {
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
inline Truth SqlTruth(const std::string& db_path, const std::string& outer,
                      const std::string& inner) {
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

inline std::string PlainCopy(const std::string& gz, const std::string& tag) {
  StatusOr<std::string> bytes = ReadInput(gz);
  EXPECT_TRUE(bytes.ok());
  const std::string plain = (std::filesystem::temp_directory_path() /
                             ("sightline_" + tag + "_" + std::to_string(::getpid()) + ".sqlite"))
                                .string();
  std::ofstream(plain, std::ios::binary)
      .write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  return plain;
}

}  // namespace sightline::cuda_graphs_test
