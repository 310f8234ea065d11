// Tests of the Nsight Systems SQLite importer (src/importers/nsys) on real exports, where every
// expected value comes from an independent SQL query on the same file, and on the tables of newer
// exports (OS call chains, scheduling, whole graphs, GPU metrics) in their real shape.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "importers/importer.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/nsys/nsys_parallel_scan.h"
#include "importers/nsys/nsys_schema.h"
#include "importers/nsys/nsys_tables.h"
#include "importers/nsys/sqlite_db.h"
#include "model/trace.h"
#include "model/trace_builder.h"
#include "nsys_test_exports.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

using namespace nsys_test;  // NOLINT(build/namespaces)

// ---- Real exports: expected values from independent SQL on the same file ----
// The shipped H100 sample (examples/samples, schema 3.20.3) always runs; the ../shared/traces
// files (schema 3.16.1 and 3.20.3) skip when absent.

class NsysRealFile : public ::testing::TestWithParam<const char*> {};

TEST_P(NsysRealFile, CountsMatchSql) {
  const std::string path = RealTrace(GetParam());
  SKIP_IF_MISSING(path);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Db db(path);
  // Whole-graph runs (nsys --cuda-graph-trace=graph) are kernel rows too, one per run.
  EXPECT_EQ(static_cast<int64_t>(trace->kernels.size()),
            db.Count("CUPTI_ACTIVITY_KIND_KERNEL", "end >= start") +
                db.Count("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "end >= start"));
  EXPECT_EQ(static_cast<int64_t>(trace->api_calls.size()),
            db.Count("CUPTI_ACTIVITY_KIND_RUNTIME", "eventClass IN (0, 1) AND end >= start"));
  const int64_t runtime =
      std::count(trace->api_calls.kind.begin(), trace->api_calls.kind.end(), ApiKind::kRuntime);
  EXPECT_EQ(runtime, db.Count("CUPTI_ACTIVITY_KIND_RUNTIME", "eventClass = 0"));
  EXPECT_EQ(static_cast<int64_t>(trace->ranges.size()),
            db.Count("NVTX_EVENTS",
                     "eventType IN (59, 60, 70, 71) AND end IS NOT NULL AND "
                     "end >= start"));
  EXPECT_EQ(CountKind(trace->memops, MemOpKind::kMemset), db.Count("CUPTI_ACTIVITY_KIND_MEMSET"));
  EXPECT_EQ(
      static_cast<int64_t>(trace->memops.size()) - CountKind(trace->memops, MemOpKind::kMemset),
      db.Count("CUPTI_ACTIVITY_KIND_MEMCPY"));
  EXPECT_EQ(CountKind(trace->memops, MemOpKind::kHtoD),
            db.Count("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind IN (1, 3, 11)"));
  EXPECT_EQ(CountKind(trace->memops, MemOpKind::kDtoH),
            db.Count("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind IN (2, 4, 12)"));
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNegativeDuration), 0);
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysUnknownStringId), 0);
  EXPECT_EQ(static_cast<int64_t>(trace->devices.size()),
            db.Int("SELECT count(DISTINCT id) FROM TARGET_INFO_GPU"));
}

TEST_P(NsysRealFile, SourceFromMetadata) {
  const std::string path = RealTrace(GetParam());
  SKIP_IF_MISSING(path);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Db db(path);
  auto meta = [&](const std::string& name) {
    auto rows = db.Rows("SELECT value FROM META_DATA_EXPORT WHERE name = '" + name + "'");
    return rows.empty() ? std::string() : rows[0][0];
  };
  EXPECT_EQ(trace->source.format, "nsys-sqlite");
  EXPECT_EQ(trace->source.format_version, meta("EXPORT_SCHEMA_VERSION"));
  EXPECT_EQ(trace->source.producer,
            meta("EXPORT_PRODUCT_NAME") + " " + meta("EXPORT_PRODUCT_VERSION"));
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysSchemaVersionUntested), 0);
  // The host (ranks on one host share a clock): TARGET_INFO_SYSTEM_ENV's Hostname.
  auto host = db.Rows("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'");
  ASSERT_EQ(host.size(), 1u);
  EXPECT_FALSE(host[0][0].empty());
  EXPECT_EQ(trace->source.host, host[0][0]);
}

TEST_P(NsysRealFile, DevicesMatchTargetInfo) {
  const std::string path = RealTrace(GetParam());
  SKIP_IF_MISSING(path);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Db db(path);
  for (const auto& row : db.Rows("SELECT id, name, smCount, computeMajor, computeMinor, "
                                 "maxWarpsPerSm * threadsPerWarp, totalMemory FROM "
                                 "TARGET_INFO_GPU")) {
    const DeviceInfo* d = trace->FindDevice(std::stoi(row[0]));
    ASSERT_NE(d, nullptr) << row[0];
    EXPECT_EQ(d->name, row[1]);
    EXPECT_EQ(d->sm_count, std::stoi(row[2]));
    EXPECT_EQ(d->cc_major, std::stoi(row[3]));
    EXPECT_EQ(d->cc_minor, std::stoi(row[4]));
    EXPECT_EQ(d->max_threads_per_sm, std::stoi(row[5]));
    EXPECT_EQ(d->total_memory_bytes, std::stoll(row[6]));
  }
}

TEST_P(NsysRealFile, PidTidDecodingMatchesProcessesTable) {
  const std::string path = RealTrace(GetParam());
  SKIP_IF_MISSING(path);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Db db(path);
  // The (pid, tid) pairs of the API calls, decoded by SQL arithmetic...
  std::set<std::pair<int32_t, int32_t>> expected;
  for (const auto& row : db.Rows("SELECT DISTINCT globalTid / 16777216 % 16777216, "
                                 "globalTid % 16777216 FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE "
                                 "eventClass IN (0, 1)")) {
    expected.emplace(std::stoi(row[0]), std::stoi(row[1]));
  }
  std::set<std::pair<int32_t, int32_t>> got;
  for (size_t i = 0; i < trace->api_calls.size(); ++i) {
    got.emplace(trace->api_calls.pid[i], trace->api_calls.tid[i]);
  }
  EXPECT_EQ(got, expected);
  // ...and each process's pid and name agree with PROCESSES' own pid column.
  for (const ProcessInfo& p : trace->processes) {
    auto rows = db.Rows("SELECT pid, name FROM PROCESSES WHERE globalPid / 16777216 % 16777216 = " +
                        std::to_string(p.pid));
    ASSERT_EQ(rows.size(), 1u) << p.pid;
    EXPECT_EQ(std::stoi(rows[0][0]), p.pid);
    EXPECT_EQ(rows[0][1], p.name);
  }
}

TEST_P(NsysRealFile, KernelLaunchLinkingMatchesSql) {
  const std::string path = RealTrace(GetParam());
  SKIP_IF_MISSING(path);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Db db(path);
  if (!db.HasTable("CUPTI_ACTIVITY_KIND_KERNEL")) {
    EXPECT_EQ(trace->kernels.size(), 0u);
    return;
  }
  auto linked_in = [&](const std::string& table) {
    if (!db.HasTable(table)) return int64_t{0};
    return db.Int("SELECT count(*) FROM " + table +
                  " AS k WHERE EXISTS (SELECT 1 FROM "
                  "CUPTI_ACTIVITY_KIND_RUNTIME AS r WHERE r.correlationId = k.correlationId AND "
                  "r.eventClass IN (0, 1) AND r.globalTid / 16777216 % 16777216 = "
                  "k.globalPid / 16777216 % 16777216)");
  };
  const int64_t expected_linked =
      linked_in("CUPTI_ACTIVITY_KIND_KERNEL") + linked_in("CUPTI_ACTIVITY_KIND_GRAPH_TRACE");
  const KernelTable& k = trace->kernels;
  int64_t linked = 0, linked_to_launch = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.launch_call[i] == kNoRow) continue;
    ++linked;
    linked_to_launch += trace->api_calls.api_class[k.launch_call[i]] == ApiClass::kLaunch;
    EXPECT_EQ(trace->api_calls.correlation[k.launch_call[i]], k.correlation[i]);
  }
  EXPECT_EQ(linked, expected_linked);
  EXPECT_EQ(linked_to_launch, linked);  // every launching call is a launch API
  EXPECT_GT(static_cast<double>(linked) / static_cast<double>(k.size()), 0.99);
}

TEST_P(NsysRealFile, NamesMatchStringIds) {
  const std::string path = RealTrace(GetParam());
  SKIP_IF_MISSING(path);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Db db(path);
  if (db.HasTable("CUPTI_ACTIVITY_KIND_KERNEL")) {
    auto rows = db.Rows(
        "SELECT d.value, s.value, k.gridX, k.blockX, k.registersPerThread, k.streamId FROM "
        "CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS d ON d.id = k.demangledName JOIN "
        "StringIds AS s ON s.id = k.shortName ORDER BY k.start, k.end DESC LIMIT 1");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(trace->str(trace->kernels.name[0]), rows[0][0]);
    EXPECT_EQ(trace->str(trace->kernels.short_name[0]), rows[0][1]);
    EXPECT_EQ(trace->kernels.grid[0].x, std::stoi(rows[0][2]));
    EXPECT_EQ(trace->kernels.block[0].x, std::stoi(rows[0][3]));
    EXPECT_EQ(trace->kernels.registers_per_thread[0], std::stoi(rows[0][4]));
    EXPECT_EQ(trace->kernels.stream[0], std::stoi(rows[0][5]));
  }
  // Distinct NVTX range names: text, else the registered string.
  std::set<std::string> expected_ranges, got_ranges;
  if (db.HasTable("NVTX_EVENTS")) {
    for (const auto& row : db.Rows("SELECT DISTINCT coalesce(n.text, s.value, '') FROM "
                                   "NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId "
                                   "WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL")) {
      expected_ranges.insert(row[0]);
    }
  }
  for (StringId id : trace->ranges.name) got_ranges.emplace(trace->str(id));
  EXPECT_EQ(got_ranges, expected_ranges);
  // API names: StringIds values without the version suffix, call for call.
  std::map<std::string, int64_t> expected_calls, got_calls;
  for (const auto& row : db.Rows("SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                                 "JOIN StringIds AS s ON s.id = r.nameId WHERE r.eventClass IN "
                                 "(0, 1) GROUP BY s.value")) {
    expected_calls[std::string(StripApiVersionSuffix(row[0]))] += std::stoll(row[1]);
  }
  for (StringId id : trace->api_calls.name) ++got_calls[std::string(trace->str(id))];
  EXPECT_EQ(got_calls, expected_calls);
}

INSTANTIATE_TEST_SUITE_P(RealTraces, NsysRealFile,
                         ::testing::Values("examples/samples/llama_decode_h100.nsys.sqlite",
                                           "tests/data/nsys/decode_loop_graph_trace_h100.sqlite",
                                           "nsys_toy_llama_demo.sqlite",
                                           "nsys_toy_llama_inference_sim.sqlite",
                                           "nsys_2025_schema_3.20_small.sqlite"));

// nsys's default --cuda-graph-trace=graph (decode_loop --cuda-graph on an H100, 20 iterations):
// each graph run is one row named after its graph, on its stream, linked to its cudaGraphLaunch,
// with the run's start and end; an info diagnostic counts them.
// OS runtime calls with their call chains: OSRT_API.callchainId names the rows of OSRT_CALLCHAINS
// (id, stackDepth 0 = innermost), column sets as in the 2025.3 export (schema 3.20.3); the rows are
// made up in that shape. A chain id with no rows is counted, a frame row with text in an integer
// column is dropped and counted, and only the frames of kept calls are read.
TEST(NsysOsCallChains, ReadsChainsInnermostFirstAndCountsWhatIsMissing) {
  TempDir dir;
  const std::string path = dir.File("osrt.sqlite");
  WriteMappingFixture(path);
  {
    Db db(path, /*create=*/true);
    db.Exec(
        "INSERT INTO StringIds VALUES (20, '__poll'), (21, '/usr/lib/x86_64-linux-gnu/libc.so.6'),"
        " (22, 'serve'), (23, '/opt/app/libserver.so'), (24, 'main'), (25, '/opt/app/server'),"
        " (26, 'poll'), (27, 'select')");
    db.Exec(
        "CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER "
        "NOT NULL, globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, "
        "nestingLevel INTEGER, callchainId INTEGER NOT NULL)");
    db.Exec(
        "CREATE TABLE OSRT_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module "
        "INTEGER NOT NULL, kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, "
        "specialEntry INTEGER, originalIP INTEGER, unwindMethod INTEGER, stackDepth INTEGER NOT "
        "NULL, PRIMARY KEY (id, stackDepth))");
    const std::string tid = std::to_string(kGlobalTid);
    db.Exec("INSERT INTO OSRT_API VALUES (100, 300, 27, " + tid +
            ", 26, 0, 0, 1), (400, 500, 27, " + tid + ", 27, 0, 0, 0), (600, 700, 27, " + tid +
            ", 26, 0, 0, 7), (800, 900, 27, " + tid + ", 27, 0, 0, 2)");
    // Chain 1 inserted out of order; chain 2's second frame has text for its symbol; chain 3
    // belongs to no kept call.
    db.Exec(
        "INSERT INTO OSRT_CALLCHAINS (id, symbol, module, unresolved, stackDepth) VALUES "
        "(1, 24, 25, 0, 2), (1, 20, 21, 0, 0), (1, 22, 23, 0, 1), "
        "(2, 20, 21, 0, 0), (2, 'x', 23, 0, 1), "
        "(3, 22, 23, 0, 0)");
  }
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const OsCallTable& os = t->os_calls;
  ASSERT_EQ(os.size(), 4u);
  auto frames = [&](size_t row) {
    std::vector<std::string> out;
    for (int32_t k = 0; k < os.frame_count[row]; ++k) {
      out.emplace_back(t->str(os.frames[static_cast<size_t>(os.first_frame[row] + k)]));
    }
    return out;
  };
  EXPECT_EQ(frames(0), (std::vector<std::string>{"__poll (libc.so.6)", "serve (libserver.so)",
                                                 "main (server)"}));
  EXPECT_TRUE(frames(1).empty());  // callchainId 0: none
  EXPECT_TRUE(frames(2).empty());  // callchainId 7: no rows
  EXPECT_EQ(frames(3), (std::vector<std::string>{"__poll (libc.so.6)"}));
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysOsCallChains), 2);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysOsCallChainMissing), 1);
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kNsysValueWrongType), 1);
}

// The scheduling scan leaves out the profiler's threads with "<>" terms (up to 64; SQLite runs a
// NOT IN list per row as an index lookup, much slower) and with NOT IN past that: the same rows
// either way, and a NULL thread in neither.
TEST(NsysSchedSelect, LeavesOutTheSkippedThreadsInBothForms) {
  TempDir dir;
  const std::string path = dir.File("sched.sqlite");
  {
    Db db(path, /*create=*/true);
    db.Exec(
        "CREATE TABLE SCHED_EVENTS (start INTEGER NOT NULL, cpu INTEGER NOT NULL, isSchedIn "
        "INTEGER NOT NULL, globalTid INTEGER, threadState INTEGER, threadBlock INTEGER)");
    std::string rows = "INSERT INTO SCHED_EVENTS VALUES (0, 0, 1, NULL, 0, 0)";
    for (int t = 1; t <= 100; ++t) {
      rows += ", (" + std::to_string(t) + ", 0, 1, " + std::to_string(t) + ", 0, 0)";
    }
    db.Exec(rows);
  }
  StatusOr<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (int skipped : {3, 64, 65, 90}) {
    std::vector<int64_t> skip;
    for (int t = 1; t <= skipped; ++t) skip.push_back(t);
    StatusOr<NsysSelect> select = SelectNsysSched(*db, skip);
    ASSERT_TRUE(select.ok()) << select.status().ToString();
    EXPECT_EQ(select->from.find("NOT IN") != std::string::npos, skipped > 64) << select->from;
    StatusOr<SqliteStatement> stmt = db->Prepare(select->sql);
    ASSERT_TRUE(stmt.ok()) << stmt.status().ToString();
    std::vector<int64_t> got;
    while (stmt->Step()) got.push_back(stmt->Int64(0));
    ASSERT_TRUE(stmt->status().ok());
    std::vector<int64_t> want;
    for (int t = skipped + 1; t <= 100; ++t) want.push_back(t);
    EXPECT_EQ(got, want) << skipped;
  }
}

TEST(NsysWholeGraphs, EachRunIsOneRowLinkedToItsLaunch) {
  const std::string path = RealTrace("tests/data/nsys/decode_loop_graph_trace_h100.sqlite");
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Db db(path);
  const auto runs = db.Rows(
      "SELECT graphId, start, end, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE "
      "ORDER BY start");
  ASSERT_EQ(runs.size(), 20u);
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kWholeGraphRuns), 20);
  const KernelTable& k = trace->kernels;
  size_t next = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    if (trace->str(k.name[i]).find("(whole graph)") == std::string_view::npos) continue;
    ASSERT_LT(next, runs.size());
    const auto& r = runs[next++];
    EXPECT_EQ(trace->str(k.short_name[i]), "CUDA graph " + r[0] + " (whole graph)");
    EXPECT_EQ(std::to_string(k.start_ns[i]), r[1]);
    EXPECT_EQ(std::to_string(k.end_ns[i]), r[2]);
    EXPECT_EQ(std::to_string(k.stream[i]), r[3]);
    ASSERT_NE(k.launch_call[i], kNoRow);
    EXPECT_EQ(std::to_string(trace->api_calls.correlation[k.launch_call[i]]), r[4]);
    EXPECT_EQ(trace->str(trace->api_calls.name[k.launch_call[i]]), "cudaGraphLaunch");
  }
  EXPECT_EQ(next, runs.size());
}

// The 3.20 capture has two API calls and no GPU activity at all: imported, with a warning.
TEST(NsysRealFileNoKernels, ImportsApiCallsAndWarns) {
  const std::string path = SharedTrace("nsys_2025_schema_3.20_small.sqlite");
  SKIP_IF_MISSING(path);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Db db(path);
  EXPECT_FALSE(trace->HasGpuWork());
  EXPECT_EQ(static_cast<int64_t>(trace->api_calls.size()), db.Count("CUPTI_ACTIVITY_KIND_RUNTIME"));
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysNoGpuActivity), 1);
  // PROCESSES lists the whole machine; only the profiled process is kept.
  EXPECT_GT(db.Count("PROCESSES"), 100);
  EXPECT_EQ(static_cast<int64_t>(trace->processes.size()),
            db.Int("SELECT count(DISTINCT globalTid / 16777216 % 16777216) FROM "
                   "CUPTI_ACTIVITY_KIND_RUNTIME"));
}

// An older export's GPU metrics (JSON rows in GENERIC_EVENTS, no GPU_METRICS table) are not read:
// the rows are counted in a warning instead of the metrics silently missing; an export with
// GPU_METRICS says nothing of its generic events.
TEST(NsysGpuMetrics, GenericEventsWithoutGpuMetricsAreCounted) {
  TempDir dir;
  const std::string path = dir.File("generic.sqlite");
  WriteKernelRows(path, "(1000, 1500, 0, 7, 1, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0)");
  {
    Db db(path, true);
    db.Exec(
        "CREATE TABLE GENERIC_EVENTS (rawTimestamp INTEGER, timestamp INTEGER, typeId INTEGER, "
        "data TEXT)");
    db.Exec("INSERT INTO GENERIC_EVENTS VALUES (1, 1100, 5, '{\"a\": 1}'), (2, 1200, 5, '{}')");
  }
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysGpuMetricsGenericEvents), 2);
  {
    Db db(path, true);
    db.Exec(
        "CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, "
        "value INTEGER)");
  }
  StatusOr<Trace> again = ImportTrace(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->diagnostics.Count(DiagCode::kNsysGpuMetricsGenericEvents), 0);
}

}  // namespace
}  // namespace sightline
