// Tests of the Nsight Systems SQLite importer (src/importers/nsys) on bad inputs: files that are
// not exports, damaged or truncated ones, and values of the wrong type, each a clear error naming
// the file or a counted drop (docs/reliability.md).
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

// ---- Bad inputs: each a non-ok Status whose message names the file ----

void ExpectErrorNamingFile(const StatusOr<Trace>& trace, const std::string& path, StatusCode code,
                           const std::string& hint) {
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), code) << trace.status().ToString();
  EXPECT_NE(trace.status().message().find(path), std::string::npos) << trace.status().message();
  EXPECT_NE(trace.status().message().find(hint), std::string::npos) << trace.status().message();
}

TEST(NsysBadInput, SqliteThatIsNotAnNsysExport) {
  TempDir dir;
  const std::string path = dir.File("other.sqlite");
  {
    Db db(path, true);
    db.Exec("CREATE TABLE customers (id INTEGER, name TEXT)");
    db.Exec("INSERT INTO customers VALUES (1, 'a')");
  }
  ExpectErrorNamingFile(ImportTrace(path), path, StatusCode::kInvalidInput,
                        "not an Nsight Systems export");
}

TEST(NsysBadInput, ExportWithoutCudaTables) {
  TempDir dir;
  const std::string path = dir.File("nvtx_only.sqlite");
  {
    Db db(path, true);
    AddMeta(db, "3.16.1");
    db.Exec(kCreateStrings);
    db.Exec("INSERT INTO StringIds VALUES (1, 'x')");
    db.Exec(kCreateNvtx);
    db.Exec("INSERT INTO NVTX_EVENTS (start, end, eventType, text) VALUES (1, 2, 59, 'r')");
  }
  ExpectErrorNamingFile(ImportTrace(path), path, StatusCode::kInvalidInput,
                        "nsys profile -t cuda,nvtx");
}

TEST(NsysBadInput, KernelsWithoutStringIds) {
  TempDir dir;
  const std::string path = dir.File("no_strings.sqlite");
  {
    Db db(path, true);
    AddMeta(db, "3.16.1");
    db.Exec(kCreateKernel);
  }
  ExpectErrorNamingFile(ImportTrace(path), path, StatusCode::kInvalidInput, "StringIds");
}

TEST(NsysBadInput, MissingRequiredColumn) {
  TempDir dir;
  const std::string path = dir.File("odd_columns.sqlite");
  {
    Db db(path, true);
    AddMeta(db, "3.16.1");
    db.Exec(kCreateStrings);
    db.Exec("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (begin INTEGER, nameId INTEGER)");
    db.Exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 1)");
  }
  ExpectErrorNamingFile(ImportTrace(path), path, StatusCode::kInvalidInput, "start");
}

TEST(NsysBadInput, TruncatedFile) {
  TempDir dir;
  const std::string full = dir.File("full.sqlite");
  WriteMappingFixture(full);
  {
    // Grow the fixture so that its tables span many pages.
    Db db(full, true);
    db.Exec(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 19999) "
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
        "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY,"
        " gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
        "localMemoryPerThread, localMemoryTotal, gridId) SELECT 10000 + i * 10, 10005 + i * "
        "10, 0, 1, 7, 1000 + i, 1, 1, 2, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, i FROM c");
  }
  ASSERT_TRUE(ImportNsysSqlite(full).ok());
  const auto size = fs::file_size(full);
  for (double fraction : {0.02, 0.25, 0.5, 0.75, 0.95}) {
    const std::string cut = dir.File("cut_" + std::to_string(fraction) + ".sqlite");
    fs::copy_file(full, cut);
    fs::resize_file(cut, static_cast<uintmax_t>(size * fraction));
    StatusOr<Trace> trace = ImportTrace(cut);
    ASSERT_FALSE(trace.ok()) << "truncated to " << fraction;
    EXPECT_NE(trace.status().message().find(cut), std::string::npos) << trace.status().message();
  }
}

// Overwritten pages: the import may succeed or fail, but must not crash, and errors name the file.
TEST(NsysBadInput, CorruptPagesNeverCrash) {
  TempDir dir;
  const std::string full = dir.File("full.sqlite");
  WriteMappingFixture(full);
  const auto size = static_cast<int64_t>(fs::file_size(full));
  int failures = 0;
  for (int64_t offset = 100; offset < size; offset += 1024) {
    const std::string bad = dir.File("bad.sqlite");
    fs::remove(bad);
    fs::copy_file(full, bad);
    {
      std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(offset);
      const std::string junk(700, static_cast<char>(0xA5 ^ (offset & 0xff)));
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    StatusOr<Trace> trace = ImportTrace(bad);
    if (!trace.ok()) {
      ++failures;
      EXPECT_NE(trace.status().message().find(bad), std::string::npos) << trace.status().message();
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(NsysBadInput, GarbageAfterSqliteMagic) {
  TempDir dir;
  const std::string path = dir.File("garbage.sqlite");
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string("SQLite format 3\0", 16) << std::string(5000, '\x5a');
  }
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find(path), std::string::npos) << trace.status().message();
}

TEST(NsysBadInput, MissingFile) {
  const std::string path = "/nonexistent/dir/report.sqlite";
  StatusOr<Trace> trace = ImportNsysSqlite(path);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), StatusCode::kNotFound);
  EXPECT_NE(trace.status().message().find(path), std::string::npos);
}

// ---- Values of the wrong type (docs/reliability.md): counted by table and dropped, never coerced
// ----

TEST(NsysWrongTypes, RowsAreCountedByTableAndDropped) {
  TempDir dir;
  const std::string path = dir.File("wrong_types.sqlite");
  WriteKernelRows(
      path,
      "(1000, 1500, 0, 7, 1, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0), "
      "('abc', NULL, 0, 7, 2, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0), "     // the row
      "(3000, 3500.5, 0, 7, 3, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0), "    // a real
      "(4000, 4500, 0, 7, 4, NULL, 1, 2, 'x', 1, 1, 128, 1, 1, 32, 0, 0), "    // optional column
      "(5000, 5500, 0, X'00', 5, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0), "  // a blob
      "(6000, 6400, 0, 7, 6, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0)");
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->kernels.size(), 2u);
  EXPECT_EQ(trace->kernels.start_ns[0], 1000);
  EXPECT_EQ(trace->kernels.start_ns[1], 6000);  // not a kernel at time 0
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysValueWrongType), 4);
  bool named = false;
  for (const Diagnostic& d : trace->diagnostics.items()) {
    if (d.id == DiagCode::kNsysValueWrongType) named = d.detail == "CUPTI_ACTIVITY_KIND_KERNEL";
  }
  EXPECT_TRUE(named);
}

// Issue 34: a device id, stream or grid size beyond 32 bits is not truncated (2^32 + 1 would
// become device 1, 2^31 a negative one): the row is dropped and counted by table.
TEST(NsysWrongTypes, ValuesBeyond32BitsAreDroppedNotTruncated) {
  TempDir dir;
  const std::string path = dir.File("out_of_range.sqlite");
  WriteKernelRows(
      path,
      "(1000, 1500, 0, 7, 1, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0), "
      "(2000, 2500, 4294967297, 7, 2, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0), "  // device
      "(3000, 3500, 0, 2147483648, 3, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0), "  // stream
      "(4000, 4500, 0, 7, 4, NULL, 1, 2, 8589934592, 1, 1, 128, 1, 1, 32, 0, 0), "  // grid x
      "(5000, 5500, 2147483647, 7, 5, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0)");  // fits
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->kernels.size(), 2u);
  EXPECT_EQ(trace->kernels.device[0], 0);
  EXPECT_EQ(trace->kernels.device[1], INT32_MAX);
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysValueOutOfRange), 3);
  bool named = false;
  for (const Diagnostic& d : trace->diagnostics.items()) {
    if (d.id == DiagCode::kNsysValueOutOfRange) named = d.detail == "CUPTI_ACTIVITY_KIND_KERNEL";
  }
  EXPECT_TRUE(named);
}

// The scan itself, with and without threads: bad rows are taken out of the chunk (values and
// texts), counted once, and a chunk that carries only bad rows still arrives.
TEST(NsysWrongTypes, ScanDropsRowsAndCountsThemInEveryChunk) {
  TempDir dir;
  const std::string path = dir.File("rows.sqlite");
  {
    Db db(path, true);
    db.Exec("CREATE TABLE a (i, t TEXT)");  // no affinity: values keep their type
    db.Exec(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 2999) "
        "INSERT INTO a SELECT CASE WHEN i % 3 = 0 THEN 'n' || i WHEN i % 3 = 1 THEN i "
        "ELSE i + 0.5 END, 'r' || i FROM c");
    db.Exec("CREATE TABLE b (j)");
    db.Exec("INSERT INTO b VALUES ('x'), (NULL)");  // nothing usable: one chunk of drops only
  }
  for (bool threads : {true, false}) {
    StatusOr<SqliteDb> scan_db = SqliteDb::OpenReadOnly(path);
    ASSERT_TRUE(scan_db.ok()) << scan_db.status().ToString();
    NsysParallelScan scan(*scan_db);
    scan.set_threads(threads ? NsysParallelScan::Threads::kAlways
                             : NsysParallelScan::Threads::kNever);
    scan.Add(0, 1, "i, t", " FROM a", 2, /*text_columns=*/0b10);
    scan.Add(1, 2, "j", " FROM b", 1);
    int64_t rows_a = 0, dropped_a = 0, rows_b = 0, dropped_b = 0;
    Status s = scan.Run([&](const NsysChunk& chunk) {
      if (chunk.tag == 1) {
        for (size_t r = 0; r < chunk.rows; ++r) {
          const int64_t* v = chunk.row(r);
          EXPECT_EQ(v[0] % 3, 1);
          EXPECT_EQ(chunk.text(v[1]), "r" + std::to_string(v[0]));
        }
        rows_a += static_cast<int64_t>(chunk.rows);
        dropped_a += chunk.wrong_type_rows;
      } else {
        rows_b += static_cast<int64_t>(chunk.rows);
        dropped_b += chunk.wrong_type_rows;
      }
      return Status::Ok();
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(rows_a, 1000) << threads;
    EXPECT_EQ(dropped_a, 2000) << threads;
    EXPECT_EQ(rows_b, 0) << threads;
    EXPECT_EQ(dropped_b, 2) << threads;
  }
}

// Nothing usable left: an error (exit 2 from the CLI) that lists what was dropped, not an empty
// report.
TEST(NsysWrongTypes, NothingUsableLeftIsAnErrorListingTheDrops) {
  TempDir dir;
  const std::string path = dir.File("all_wrong.sqlite");
  WriteKernelRows(path,
                  "('abc', NULL, 0, 7, 1, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0), "
                  "(NULL, 2000, 0, 7, 2, NULL, 1, 2, 1, 1, 1, 128, 1, 1, 32, 0, 0)");
  StatusOr<Trace> trace = ImportTrace(path);
  ExpectErrorNamingFile(trace, path, StatusCode::kInvalidInput, "nothing usable is left");
  EXPECT_NE(trace.status().message().find("2 nsys_value_wrong_type"), std::string::npos)
      << trace.status().message();
  EXPECT_NE(trace.status().message().find("CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos);
  // The importer alone still returns the (empty) trace and its diagnostics.
  StatusOr<Trace> raw = ImportNsysSqlite(path);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->kernels.size(), 0u);
  EXPECT_EQ(raw->diagnostics.Count(DiagCode::kNsysValueWrongType), 2);

  const testing::CliResult cli = testing::RunSightline("analyze '" + path + "'");
  EXPECT_EQ(cli.exit_code, 2) << cli.out << cli.err;
  EXPECT_NE(cli.err.find("nsys_value_wrong_type"), std::string::npos) << cli.err;
  EXPECT_EQ(cli.out.find("Kernels"), std::string::npos) << cli.out;  // no empty report
}

// An export with tables but no rows drops nothing: still a (trivially empty) trace.
TEST(NsysWrongTypes, EmptyCaptureDroppingNothingStaysValid) {
  TempDir dir;
  const std::string path = dir.File("empty.sqlite");
  {
    Db db(path, true);
    AddMeta(db, "3.16.1");
    db.Exec(kCreateStrings);
    db.Exec(kCreateLooseKernel);
  }
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->kernels.size(), 0u);
}

}  // namespace
}  // namespace sightline
