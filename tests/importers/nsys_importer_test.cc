// Tests of the Nsight Systems SQLite importer (src/importers/nsys): sniffing, each mapping on a
// tiny export built with the SQLite C API (the real 3.16 column sets, nsys_test_exports.h), the
// parallel table reader and the schema versions. Bad inputs: nsys_bad_input_test.cc; the real
// exports, where every expected value comes from an independent SQL query on the same file:
// nsys_real_file_test.cc. Timing a large generated export is a benchmark: bench/analyze_bench.cc,
// ImportFile/nsys_sqlite.
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
#include "nsys_test_exports.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

using namespace nsys_test;  // NOLINT(build/namespaces)

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

}  // namespace
}  // namespace sightline
