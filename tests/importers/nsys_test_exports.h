// What the tests of the Nsight Systems SQLite importer share (nsys_importer_test.cc,
// nsys_bad_input_test.cc, nsys_real_file_test.cc): a read-write SQLite connection, a temporary
// directory, tiny exports with the real 3.16 column sets, and the paths of the real exports.
#pragma once

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
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline::nsys_test {

namespace fs = std::filesystem;

// ---- SQLite helpers ----

// A read-write SQLite connection for building fixtures and for the independent queries.
class Db {
 public:
  explicit Db(const std::string& path, bool create = false) {
    const int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errmsg(db_);
    }
    if (create) Exec("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY");  // fast fixtures
  }
  ~Db() { sqlite3_close_v2(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void Exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << (error ? error : "?");
    }
    sqlite3_free(error);
  }
  // All rows of a query, each column as text ("" for NULL).
  std::vector<std::vector<std::string>> Rows(const std::string& sql) {
    std::vector<std::vector<std::string>> rows;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return rows;
    }
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const unsigned char* text = sqlite3_column_text(stmt, c);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(stmt);
    return rows;
  }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    int64_t value = -1;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return value;
    }
    if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
  }
  bool HasTable(const std::string& table) {
    return Int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" + table +
               "'") > 0;
  }
  // count(*) of a table, 0 when nsys did not create it.
  int64_t Count(const std::string& table, const std::string& where = "") {
    if (!HasTable(table)) return 0;
    return Int("SELECT count(*) FROM " + table + (where.empty() ? "" : " WHERE " + where));
  }

 private:
  sqlite3* db_ = nullptr;
};

// A temporary directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sightline_nsys_XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

// ---- Fixture exports with the real (schema 3.16.1) column sets ----

constexpr char kCreateMeta[] = "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT)";
constexpr char kCreateStrings[] =
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)";
constexpr char kCreateKernel[] =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, "
    "launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, "
    "gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, "
    "blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, "
    "staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, "
    "localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, "
    "gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, "
    "sharedMemoryLimitConfig INTEGER)";
constexpr char kCreateRuntime[] =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, "
    "nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER)";
constexpr char kCreateMemcpy[] =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, "
    "srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, "
    "dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, "
    "virtualAddress INTEGER)";
constexpr char kCreateMemset[] =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER)";
constexpr char kCreateNvtx[] =
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, "
    "rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, "
    "endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, "
    "int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, "
    "floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT)";

// PID 4242, TID 4243 on a machine id 1 (the bits above 47).
constexpr int64_t kGlobalPid = (int64_t{1} << 48) | (int64_t{4242} << 24);
constexpr int64_t kGlobalTid = kGlobalPid | 4243;
constexpr int64_t kDriverGlobalTid = kGlobalPid | 4250;

inline void AddMeta(Db& db, const std::string& version) {
  db.Exec(kCreateMeta);
  db.Exec(
      "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'), "
      "('EXPORT_PRODUCT_VERSION', '2024.6.2.225'), ('EXPORT_SCHEMA_VERSION', '" +
      version + "')");
}

// A small export that exercises every mapping; the values are checked in NsysMapping tests.
inline void WriteMappingFixture(const std::string& path, const std::string& version = "3.16.1") {
  Db db(path, /*create=*/true);
  if (!version.empty()) AddMeta(db, version);
  db.Exec(kCreateStrings);
  db.Exec(
      "INSERT INTO StringIds VALUES (1, 'void gemm_kernel<float, 128>(float const*, float*, int)'),"
      " (2, 'gemm_kernel'), (3, 'cudaLaunchKernel_v7000'), (4, 'cuLaunchKernel'),"
      " (5, 'cudaMemcpyAsync_v3020'), (6, 'cudaMemsetAsync_v3020'), (7, 'backtrace'),"
      " (8, 'registered_step'), (9, 'main-thread'), (10, 'my_domain')");
  db.Exec(kCreateKernel);
  // Kernel 1 launched by runtime call 11; kernel 2 by driver call 12; kernel 3 by nothing.
  db.Exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
      "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, "
      "gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
      "localMemoryPerThread, localMemoryTotal, gridId) VALUES "
      "(1000, 1500, 0, 1, 7, 11, " +
      std::to_string(kGlobalPid) +
      ", 1, 2, 64, 132, 2, 1, 256, 1, 1, 1024, 49152, 0, 0, 1), "
      "(2000, 2600, 0, 1, 7, 12, " +
      std::to_string(kGlobalPid) +
      ", 1, 2, 64, 132, 2, 1, 256, 1, 1, 1024, 49152, 0, 0, 2), "
      "(3000, 3100, 1, 1, 9, 99, " +
      std::to_string(kGlobalPid) + ", 1, 2, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 3)");
  db.Exec(kCreateRuntime);
  db.Exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES "
      "(900, 950, 0, " +
      std::to_string(kGlobalTid) +
      ", 11, 3, 0, NULL), "
      "(1900, 1950, 1, " +
      std::to_string(kDriverGlobalTid) +
      ", 12, 4, 0, NULL), "
      "(400, 450, 0, " +
      std::to_string(kGlobalTid) +
      ", 13, 5, 0, NULL), "
      "(500, 550, 0, " +
      std::to_string(kGlobalTid) +
      ", 14, 6, 0, NULL), "
      "(600, 650, 67, " +
      std::to_string(kGlobalTid) + ", 15, 7, 0, NULL)");
  db.Exec(kCreateMemcpy);
  db.Exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
      "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES "
      "(460, 480, 0, 1, 7, 13, " +
      std::to_string(kGlobalPid) +
      ", 4096, 1, 1, 2), "
      "(700, 720, 0, 1, 7, NULL, " +
      std::to_string(kGlobalPid) + ", 8192, 2, 2, 0)");
  db.Exec(kCreateMemset);
  db.Exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
      "correlationId, globalPid, value, bytes, memKind) VALUES "
      "(560, 580, 0, 1, 7, 14, " +
      std::to_string(kGlobalPid) + ", 0, 2048, 2)");
  db.Exec(kCreateNvtx);
  const std::string tid = std::to_string(kGlobalTid);
  db.Exec(
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) "
      "VALUES "
      "(10, NULL, 75, NULL, " +
      tid +
      ", 10, 5), "  // domain 5 = my_domain
      "(100, 5000, 59, 'outer', " +
      tid +
      ", NULL, 0), "  // push/pop, text
      "(800, 3000, 59, NULL, " +
      tid +
      ", 8, 5), "  // registered, in domain
      "(850, 2900, 60, 'async_work', " +
      tid +
      ", NULL, 0), "  // start/end
      "(900, NULL, 59, 'never_closed', " +
      tid +
      ", NULL, 0), "  // no end
      "(950, NULL, 34, 'a_mark', " +
      tid +
      ", NULL, 0), "  // mark
      "(960, NULL, 33, 'a_category', " +
      tid + ", NULL, 0)");  // category
  db.Exec("CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT)");
  db.Exec("INSERT INTO PROCESSES VALUES (" + std::to_string(kGlobalPid) +
          ", 4242, 'python3'), "
          "(" +
          std::to_string((int64_t{1} << 48) | (int64_t{1} << 24)) + ", 1, 'systemd')");
  db.Exec(
      "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid "
      "INTEGER)");
  db.Exec("INSERT INTO ThreadNames VALUES (9, 0, " + tid + ")");
  db.Exec(
      "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, "
      "l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, "
      "smCount INTEGER, cuDevice INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm "
      "INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, maxWarpsPerSm INTEGER, "
      "maxBlocksPerSm INTEGER, computeMajor INTEGER, computeMinor INTEGER)");
  db.Exec(
      "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', 52428800, "
      "85045231616, 3352320000000, 1980000000, 132, 0, 232448, 233472, 65536, 32, 64, 32, 9, "
      "0)");
}

// A file of ../shared/traces; when that is absent, a path that does not exist, named so in the
// skip message.
inline std::string SharedTrace(const std::string& name) {
  const std::string dir = testing::SharedTracesDir();
  return (fs::path(dir.empty() ? "../shared/traces (absent)" : dir) / name).string();
}

// "examples/..." is in this repository; anything else is a file of ../shared/traces.
inline std::string RealTrace(const std::string& name) {
  if (name.starts_with("examples/") || name.starts_with("tests/")) {
    return (fs::path(SIGHTLINE_SOURCE_DIR) / name).string();
  }
  return SharedTrace(name);
}

#define SKIP_IF_MISSING(path) \
  if (!fs::exists(path)) GTEST_SKIP() << "shared trace not available: " << (path)

inline int64_t CountKind(const MemOpTable& m, MemOpKind kind) {
  return std::count(m.kind.begin(), m.kind.end(), kind);
}

// A kernel table as a hostile or damaged file may have it: the real columns, no NOT NULL.
constexpr char kCreateLooseKernel[] =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
    "streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, "
    "shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, "
    "blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER, "
    "dynamicSharedMemory INTEGER)";

// An export whose kernel rows are `rows` (each a parenthesised list of the 17 values above).
inline void WriteKernelRows(const std::string& path, const std::string& rows) {
  Db db(path, true);
  AddMeta(db, "3.16.1");
  db.Exec(kCreateStrings);
  db.Exec("INSERT INTO StringIds VALUES (1, 'void gemm<float>(float*)'), (2, 'gemm')");
  db.Exec(kCreateLooseKernel);
  db.Exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " + rows);
}

}  // namespace sightline::nsys_test
