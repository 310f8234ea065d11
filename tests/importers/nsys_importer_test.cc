// Tests of the Nsight Systems SQLite importer (src/importers/nsys).
//
// Two kinds: (1) tiny exports built here with the SQLite C API, with the real 3.16 column sets,
// to check each mapping and each bad input; (2) the real exports in ../shared/traces, where every
// expected value comes from an independent SQL query on the same file. Timing a large generated
// export is a benchmark: bench/analyze_bench.cc, ImportFile/nsys_sqlite.
#include "importers/nsys/nsys_importer.h"

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
#include "importers/nsys/nsys_parallel_scan.h"
#include "importers/nsys/nsys_schema.h"
#include "importers/nsys/nsys_tables.h"
#include "importers/nsys/sqlite_db.h"
#include "model/trace.h"
#include "model/trace_builder.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

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

void AddMeta(Db& db, const std::string& version) {
  db.Exec(kCreateMeta);
  db.Exec(
      "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'), "
      "('EXPORT_PRODUCT_VERSION', '2024.6.2.225'), ('EXPORT_SCHEMA_VERSION', '" +
      version + "')");
}

// A small export that exercises every mapping; the values are checked in NsysMapping tests.
void WriteMappingFixture(const std::string& path, const std::string& version = "3.16.1") {
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
std::string SharedTrace(const std::string& name) {
  const std::string dir = testing::SharedTracesDir();
  return (fs::path(dir.empty() ? "../shared/traces (absent)" : dir) / name).string();
}

// "examples/..." is in this repository; anything else is a file of ../shared/traces.
std::string RealTrace(const std::string& name) {
  if (name.starts_with("examples/") || name.starts_with("tests/")) {
    return (fs::path(SIGHTLINE_SOURCE_DIR) / name).string();
  }
  return SharedTrace(name);
}

#define SKIP_IF_MISSING(path) \
  if (!fs::exists(path)) GTEST_SKIP() << "shared trace not available: " << (path)

int64_t CountKind(const MemOpTable& m, MemOpKind kind) {
  return std::count(m.kind.begin(), m.kind.end(), kind);
}

// ---- Sniffing ----

TEST(NsysSniff, RecognisesSqliteMagicOnly) {
  EXPECT_TRUE(SniffNsysSqlite(std::string("SQLite format 3\0rest", 20)));
  EXPECT_FALSE(SniffNsysSqlite("SQLite format 3"));  // no NUL: a text file that says so
  EXPECT_FALSE(SniffNsysSqlite("{\"traceEvents\": []}"));
  EXPECT_FALSE(SniffNsysSqlite(""));
}

TEST(NsysSniff, ImportTraceDispatchesToNsys) {
  TempDir dir;
  const std::string path = dir.File("mapping.sqlite");
  WriteMappingFixture(path);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->source.format, "nsys-sqlite");
}

// ---- Mapping, on the fixture ----

class NsysMapping : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("mapping.sqlite");
    WriteMappingFixture(path_);
    StatusOr<Trace> trace = ImportNsysSqlite(path_);
    ASSERT_TRUE(trace.ok()) << trace.status().ToString();
    trace_ = std::move(trace).value();
  }
  TempDir dir_;
  std::string path_;
  Trace trace_;
};

TEST_F(NsysMapping, Source) {
  EXPECT_EQ(trace_.source.path, path_);
  EXPECT_EQ(trace_.source.format, "nsys-sqlite");
  EXPECT_EQ(trace_.source.format_version, "3.16.1");
  EXPECT_EQ(trace_.source.producer, "NVIDIA Nsight Systems 2024.6.2.225");
}

TEST_F(NsysMapping, Kernels) {
  const KernelTable& k = trace_.kernels;
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k.start_ns[0], 1000);
  EXPECT_EQ(k.end_ns[0], 1500);
  EXPECT_EQ(trace_.str(k.name[0]), "void gemm_kernel<float, 128>(float const*, float*, int)");
  EXPECT_EQ(trace_.str(k.short_name[0]), "gemm_kernel");
  EXPECT_EQ(k.device[0], 0);
  EXPECT_EQ(k.stream[0], 7);
  EXPECT_EQ(k.pid[0], 4242);
  EXPECT_EQ(k.correlation[0], 11);
  EXPECT_EQ(k.grid[0], (Dim3{132, 2, 1}));
  EXPECT_EQ(k.block[0], (Dim3{256, 1, 1}));
  EXPECT_EQ(k.registers_per_thread[0], 64);
  EXPECT_EQ(k.static_smem_bytes[0], 1024);
  EXPECT_EQ(k.dynamic_smem_bytes[0], 49152);
  EXPECT_EQ(k.device[2], 1);
  EXPECT_EQ(k.stream[2], 9);
}

TEST_F(NsysMapping, ApiCallsSplitRuntimeAndDriverAndSkipOtherClasses) {
  const ApiCallTable& a = trace_.api_calls;
  ASSERT_EQ(a.size(), 4u);  // the eventClass 67 (backtrace) row is not an API call
  std::map<std::string, size_t> row;
  for (size_t i = 0; i < a.size(); ++i) row[std::string(trace_.str(a.name[i]))] = i;
  ASSERT_TRUE(row.count("cudaLaunchKernel"));  // "_v7000" removed
  ASSERT_TRUE(row.count("cuLaunchKernel"));
  const size_t rt = row["cudaLaunchKernel"], drv = row["cuLaunchKernel"];
  EXPECT_EQ(a.kind[rt], ApiKind::kRuntime);
  EXPECT_EQ(a.kind[drv], ApiKind::kDriver);
  EXPECT_EQ(a.pid[rt], 4242);
  EXPECT_EQ(a.tid[rt], 4243);
  EXPECT_EQ(a.tid[drv], 4250);
  EXPECT_EQ(a.correlation[rt], 11);
  EXPECT_EQ(a.start_ns[rt], 900);
  EXPECT_EQ(a.end_ns[rt], 950);
  EXPECT_EQ(trace_.diagnostics.Count(DiagCode::kNsysApiRowOtherClass), 1);
}

TEST_F(NsysMapping, KernelsLinkToRuntimeAndDriverLaunches) {
  const KernelTable& k = trace_.kernels;
  ASSERT_NE(k.launch_call[0], kNoRow);
  ASSERT_NE(k.launch_call[1], kNoRow);
  EXPECT_EQ(trace_.str(trace_.api_calls.name[k.launch_call[0]]), "cudaLaunchKernel");
  EXPECT_EQ(trace_.str(trace_.api_calls.name[k.launch_call[1]]), "cuLaunchKernel");
  EXPECT_EQ(k.launch_call[2], kNoRow);
  EXPECT_EQ(trace_.diagnostics.Count(DiagCode::kKernelWithoutLaunch), 1);
}

TEST_F(NsysMapping, MemoryOperations) {
  const MemOpTable& m = trace_.memops;
  ASSERT_EQ(m.size(), 3u);  // sorted by start: HtoD 460, memset 560, DtoH 700
  EXPECT_EQ(m.kind[0], MemOpKind::kHtoD);
  EXPECT_EQ(m.src_kind[0], MemoryKind::kPinned);
  EXPECT_EQ(m.dst_kind[0], MemoryKind::kDevice);
  EXPECT_EQ(m.size_bytes[0], 4096);
  EXPECT_EQ(m.correlation[0], 13);
  EXPECT_NE(m.launch_call[0], kNoRow);
  EXPECT_EQ(m.kind[1], MemOpKind::kMemset);
  EXPECT_EQ(m.dst_kind[1], MemoryKind::kDevice);
  EXPECT_EQ(m.size_bytes[1], 2048);
  EXPECT_EQ(m.kind[2], MemOpKind::kDtoH);
  EXPECT_EQ(m.src_kind[2], MemoryKind::kDevice);
  EXPECT_EQ(m.dst_kind[2], MemoryKind::kPageable);
  EXPECT_EQ(m.correlation[2], -1);  // NULL correlationId
  EXPECT_EQ(m.pid[2], 4242);
}

TEST_F(NsysMapping, NvtxRangesNamesDomainsAndDrops) {
  const RangeTable& r = trace_.ranges;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(trace_.str(r.name[0]), "outer");
  EXPECT_EQ(r.kind[0], RangeKind::kNvtxPushPop);
  EXPECT_EQ(trace_.str(r.domain[0]), "");
  EXPECT_EQ(trace_.str(r.name[1]), "registered_step");  // StringIds[textId]
  EXPECT_EQ(trace_.str(r.domain[1]), "my_domain");      // from the domain-create event
  EXPECT_EQ(r.pid[1], 4242);
  EXPECT_EQ(r.tid[1], 4243);
  EXPECT_EQ(trace_.str(r.name[2]), "async_work");
  EXPECT_EQ(r.kind[2], RangeKind::kNvtxStartEnd);
  EXPECT_EQ(r.depth[1], 1);  // nested in "outer"
  EXPECT_EQ(trace_.diagnostics.Count(DiagCode::kNvtxRangeWithoutEnd), 1);
  EXPECT_EQ(trace_.diagnostics.Count(DiagCode::kNvtxMarkIgnored), 1);
  EXPECT_EQ(trace_.diagnostics.Count(DiagCode::kNvtxEventIgnored), 1);
}

TEST_F(NsysMapping, Device) {
  ASSERT_EQ(trace_.devices.size(), 1u);
  const DeviceInfo& d = trace_.devices[0];
  EXPECT_EQ(d.id, 0);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.cc_major, 9);
  EXPECT_EQ(d.cc_minor, 0);
  EXPECT_EQ(d.total_memory_bytes, 85045231616);
  EXPECT_EQ(d.max_threads_per_sm, 2048);  // 64 warps x 32
  EXPECT_EQ(d.max_blocks_per_sm, 32);
  EXPECT_EQ(d.registers_per_sm, 65536);
  EXPECT_EQ(d.shared_memory_per_sm_bytes, 233472);
  EXPECT_EQ(d.shared_memory_per_block_optin_bytes, 232448);
  EXPECT_EQ(d.l2_cache_bytes, 52428800);
  EXPECT_EQ(d.clock_rate_hz, 1980000000);
  EXPECT_EQ(d.memory_bandwidth_bytes_per_s, 3352320000000);
}

TEST_F(NsysMapping, ProcessesAndThreadsOnlyThoseWithEvents) {
  ASSERT_EQ(trace_.processes.size(), 1u);  // systemd has no events
  EXPECT_EQ(trace_.processes[0].pid, 4242);
  EXPECT_EQ(trace_.processes[0].name, "python3");
  ASSERT_EQ(trace_.threads.size(), 2u);  // 4243 (named) and 4250 (driver calls, no name)
  EXPECT_EQ(trace_.threads[0].tid, 4243);
  EXPECT_EQ(trace_.threads[0].name, "main-thread");
  EXPECT_EQ(trace_.threads[1].tid, 4250);
  EXPECT_EQ(trace_.threads[1].name, "");
}

TEST(NsysGlobalIds, PackPidAndTid) {
  EXPECT_EQ(NsysPidOf(kGlobalTid), 4242);
  EXPECT_EQ(NsysTidOf(kGlobalTid), 4243);
  EXPECT_EQ(NsysPidOf(kGlobalPid), 4242);
  EXPECT_EQ(NsysTidOf(kGlobalPid), 0);
}

TEST(NsysOldSchema, ReadsTargetInfoCudaGpuWithCuptiUnits) {
  TempDir dir;
  const std::string path = dir.File("old_gpu.sqlite");
  {
    Db db(path, true);
    AddMeta(db, "3.16.1");
    db.Exec(kCreateStrings);
    db.Exec("INSERT INTO StringIds VALUES (1, 'k')");
    db.Exec(kCreateKernel);
    db.Exec(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
        "demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, "
        "blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
        "localMemoryTotal, gridId) VALUES (1, 2, 3, 1, 7, 1, 1, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, "
        "0, 1)");
    db.Exec(
        "CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId INTEGER, name TEXT, "
        "numMultiprocessors INTEGER, computeCapabilityMajor INTEGER, "
        "computeCapabilityMinor INTEGER, globalMemorySize INTEGER, numThreadsPerWarp INTEGER, "
        "maxWarpsPerMultiprocessor INTEGER, coreClockRate INTEGER, "
        "globalMemoryBandwidth INTEGER)");
    db.Exec(
        "INSERT INTO TARGET_INFO_CUDA_GPU VALUES (3, 'Tesla V100', 80, 7, 0, 17179869184, "
        "32, 64, 1530000, 898048000)");
  }
  StatusOr<Trace> trace = ImportNsysSqlite(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  const DeviceInfo* d = trace->FindDevice(3);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "Tesla V100");
  EXPECT_EQ(d->sm_count, 80);
  EXPECT_EQ(d->cc_major, 7);
  EXPECT_EQ(d->max_threads_per_sm, 2048);
  EXPECT_EQ(d->clock_rate_hz, 1530000000);                   // kHz -> Hz
  EXPECT_EQ(d->memory_bandwidth_bytes_per_s, 898048000000);  // kB/s -> B/s
  EXPECT_EQ(trace->kernels.pid[0], -1);                      // NULL globalPid
  EXPECT_EQ(trace->kernels.correlation[0], -1);
}

// ---- The parallel table reader ----

// Every row of `SELECT i, 'r' || i` over n rows, in order, with and without threads; and a
// consumer error stops the scan.
TEST(NsysParallelScan, DeliversRowsInOrderWithAndWithoutThreads) {
  TempDir dir;
  const std::string path = dir.File("rows.sqlite");
  {
    Db db(path, true);
    db.Exec("CREATE TABLE a (i INTEGER, t TEXT)");
    db.Exec(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 4999) "
        "INSERT INTO a SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE 'r' || i END FROM c");
    db.Exec("CREATE TABLE b (j INTEGER)");
    db.Exec(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 2999) "
        "INSERT INTO b SELECT i * 2 FROM c");
  }
  for (bool threads : {true, false}) {
    StatusOr<SqliteDb> scan_db = SqliteDb::OpenReadOnly(path);
    ASSERT_TRUE(scan_db.ok()) << scan_db.status().ToString();
    NsysParallelScan scan(*scan_db);
    scan.set_threads(threads ? NsysParallelScan::Threads::kAlways
                             : NsysParallelScan::Threads::kNever);
    scan.Add(0, /*tag=*/1, "i, t", " FROM a", 2, /*text_columns=*/0b10);
    scan.Add(1, /*tag=*/2, "j", " FROM b", 1);
    int64_t next_a = 0, next_b = 0;
    Status s = scan.Run([&](const NsysChunk& chunk) {
      for (size_t r = 0; r < chunk.rows; ++r) {
        const int64_t* v = chunk.row(r);
        if (chunk.tag == 1) {
          EXPECT_EQ(v[0], next_a);
          EXPECT_EQ(chunk.text(v[1]), next_a % 7 == 0 ? "" : "r" + std::to_string(next_a));
          ++next_a;
        } else {
          EXPECT_EQ(v[0], 2 * next_b);
          ++next_b;
        }
      }
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(next_a, 5000) << threads;
    EXPECT_EQ(next_b, 3000) << threads;

    StatusOr<SqliteDb> failing_db = SqliteDb::OpenReadOnly(path);
    ASSERT_TRUE(failing_db.ok()) << failing_db.status().ToString();
    NsysParallelScan failing(*failing_db);
    failing.set_threads(threads ? NsysParallelScan::Threads::kAlways
                                : NsysParallelScan::Threads::kNever);
    failing.Add(0, 1, "i, t", " FROM a", 2, 0b10);
    int calls = 0;
    Status f = failing.Run([&](const NsysChunk&) {
      ++calls;
      return InvalidInputError("stop here");
    });
    EXPECT_EQ(f.message(), "stop here");
    EXPECT_EQ(calls, 1);
  }
}

TEST(NsysParallelScan, ReportsSqlErrorsNamingTheFile) {
  TempDir dir;
  const std::string path = dir.File("rows.sqlite");
  {
    Db db(path, true);
    db.Exec("CREATE TABLE a (i INTEGER)");
  }
  StatusOr<SqliteDb> scan_db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(scan_db.ok()) << scan_db.status().ToString();
  NsysParallelScan scan(*scan_db);
  scan.Add(0, 1, "no_such_column", " FROM a", 1);
  Status s = scan.Run([](const NsysChunk&) { return Status::Ok(); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
}

// ---- Versions ----

TEST(NsysVersion, MissingVersionImportsWithDiagnostic) {
  TempDir dir;
  const std::string path = dir.File("no_version.sqlite");
  WriteMappingFixture(path, /*version=*/"");
  StatusOr<Trace> trace = ImportNsysSqlite(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysSchemaVersionUnknown), 1);
  EXPECT_EQ(trace->kernels.size(), 3u);
}

TEST(NsysVersion, UnknownMajorIsUnimplemented) {
  TempDir dir;
  const std::string path = dir.File("future.sqlite");
  WriteMappingFixture(path, "4.0.0");
  StatusOr<Trace> trace = ImportNsysSqlite(path);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(trace.status().message().find(path), std::string::npos);
  EXPECT_NE(trace.status().message().find("4.0.0"), std::string::npos);
}

TEST(NsysVersion, SupportedRangeImportsCleanly) {
  TempDir dir;
  for (const std::string version : {"3.16.1", "3.20.3", "3.28.0"}) {
    const std::string path = dir.File("v" + version + ".sqlite");
    WriteMappingFixture(path, version);
    StatusOr<Trace> trace = ImportNsysSqlite(path);
    ASSERT_TRUE(trace.ok()) << version << ": " << trace.status().ToString();
    EXPECT_EQ(trace->source.format_version, version);
    EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysSchemaVersionUntested), 0) << version;
  }
  const std::string old_minor = dir.File("v3.2.sqlite");
  WriteMappingFixture(old_minor, "3.2.0");
  StatusOr<Trace> trace = ImportNsysSqlite(old_minor);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysSchemaVersionUntested), 1);
}

// Exports before 2024 keep the schema version in EXPORT_META_DATA: it is read from there (the
// diagnostic said the export stated none).
TEST(NsysVersion, OlderExportsKeepItInExportMetaData) {
  TempDir dir;
  const std::string path = dir.File("old_meta.sqlite");
  WriteMappingFixture(path, "3.5.0");
  {
    Db db(path, /*create=*/true);
    db.Exec("ALTER TABLE META_DATA_EXPORT RENAME TO EXPORT_META_DATA");
  }
  StatusOr<Trace> trace = ImportNsysSqlite(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->source.format_version, "3.5.0");
  EXPECT_EQ(trace->diagnostics.Count(DiagCode::kNsysSchemaVersionUnknown), 0);
  EXPECT_EQ(trace->kernels.size(), 3u);
}

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

// A kernel table as a hostile or damaged file may have it: the real columns, no NOT NULL.
constexpr char kCreateLooseKernel[] =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
    "streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, "
    "shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, "
    "blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER, "
    "dynamicSharedMemory INTEGER)";

// An export whose kernel rows are `rows` (each a parenthesised list of the 17 values above).
void WriteKernelRows(const std::string& path, const std::string& rows) {
  Db db(path, true);
  AddMeta(db, "3.16.1");
  db.Exec(kCreateStrings);
  db.Exec("INSERT INTO StringIds VALUES (1, 'void gemm<float>(float*)'), (2, 'gemm')");
  db.Exec(kCreateLooseKernel);
  db.Exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " + rows);
}

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

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

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
