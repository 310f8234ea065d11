// The nsys importer's entry points: sniffing, opening and validating the export, then reading the
// tables (nsys_tables.h) into one TraceBuilder: the large ones through NsysParallelScan, the small
// ones directly. docs/formats/nsys.md has the mapping.
#include "importers/nsys/nsys_importer.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <system_error>

#include "base/mapped_reads.h"
#include "importers/nsys/nsys_enums.h"
#include "importers/nsys/nsys_parallel_scan.h"
#include "importers/nsys/nsys_schema.h"
#include "importers/nsys/nsys_strings.h"
#include "importers/nsys/nsys_tables.h"
#include "importers/nsys/sqlite_db.h"

namespace sightline {
namespace {

// Any table row takes more than this many bytes of the file; bounds the reservation hints.
constexpr int64_t kMinBytesPerRow = 16;

Status CheckHasStringIds(const SqliteDb& db) {
  if (db.HasTable(kNsysStringTable)) return Status::Ok();
  if (!db.HasTable(kNsysKernelTable) && !db.HasTable(kNsysRuntimeTable)) return Status::Ok();
  return InvalidInputError(fmt::format(
      "{}: the export has CUDA kernel or API tables but no StringIds table, so their names "
      "cannot be resolved; the file is incomplete. Export it again with "
      "`nsys export --type sqlite`",
      db.path()));
}

void DescribeSource(const std::string& path, const NsysExportInfo& info, TraceBuilder& builder) {
  TraceSource& source = builder.source();
  source.path = path;
  source.format = "nsys-sqlite";
  source.format_version = info.schema_version;
  source.producer = info.product_name;
  if (!info.product_version.empty()) {
    if (!source.producer.empty()) source.producer += " ";
    source.producer += info.product_version;
  }
  Diagnostics& d = builder.diagnostics();
  if (!info.host_name.empty()) source.host = info.host_name;
  if (info.schema_version.empty()) {
    d.Add(DiagCode::kNsysSchemaVersionUnknown, 1,
          fmt::format("read as schema {}.x", kNsysSupportedMajor));
  } else if (info.minor < kNsysTestedMinorLow || info.minor > kNsysTestedMinorHigh) {
    d.Add(DiagCode::kNsysSchemaVersionUntested, 1,
          fmt::format("export schema {}; checked on {}.{} to {}.{}", info.schema_version,
                      kNsysSupportedMajor, kNsysTestedMinorLow, kNsysSupportedMajor,
                      kNsysTestedMinorHigh));
  }
}

enum ScanTag { kKernels, kMemcpys, kMemsets, kApiCalls, kNvtxDomains, kNvtx, kOsCalls, kSched };

// The table a scan reads, for diagnostics; nullptr when its rows are counted by another scan.
const char* ScanTable(ScanTag tag) {
  switch (tag) {
    case kKernels:
      return kNsysKernelTable;
    case kMemcpys:
      return kNsysMemcpyTable;
    case kMemsets:
      return kNsysMemsetTable;
    case kApiCalls:
      return kNsysRuntimeTable;
    case kNvtxDomains:
      return nullptr;  // its rows are NVTX rows too, counted by the kNvtx scan
    case kNvtx:
      return kNsysNvtxTable;
    case kOsCalls:
      return kNsysOsCallTable;
    case kSched:
      return kNsysSchedTable;
  }
  return nullptr;
}

// Reads the large tables. Two workers: kernels (the widest rows) and memory operations on one;
// API calls, NVTX domains and NVTX ranges on the other (a worker's scans arrive in order, so the
// domains are known before the first range). The chunks are mapped here as they arrive.
Status ReadLargeTables(NsysContext& ctx) {
  SqliteDb& db = ctx.db;
  NsysParallelScan scan(db);
  ctx.gil = {ctx.builder.Intern("GIL Trace"), ctx.builder.Intern("Holding GIL"),
             ctx.builder.Intern("Waiting for GIL"), ctx.builder.Intern("Python Periodic Sampling")};
  auto add = [&](int worker, ScanTag tag, const char* table,
                 StatusOr<NsysSelect> (*select)(SqliteDb&), uint64_t text_columns) -> Status {
    if (!db.HasTable(table)) return Status::Ok();
    ASSIGN_OR_RETURN(NsysSelect s, select(db));
    // Integer columns of a whole table: the page reader may take them (sqlite_pages.h).
    std::optional<NsysPageRequest> pages;
    if (text_columns == 0 && !s.table.empty()) {
      pages = NsysPageRequest{s.table, s.chosen, s.null_as};
    }
    scan.Add(worker, tag, std::move(s.columns), std::move(s.from),
             static_cast<int>(s.chosen.size()), text_columns, std::move(pages));
    return Status::Ok();
  };
  RETURN_IF_ERROR(add(0, kKernels, kNsysKernelTable, &SelectNsysKernels, 0));
  RETURN_IF_ERROR(add(0, kMemcpys, kNsysMemcpyTable, &SelectNsysMemcpys, 0));
  RETURN_IF_ERROR(add(0, kMemsets, kNsysMemsetTable, &SelectNsysMemsets, 0));
  RETURN_IF_ERROR(add(1, kApiCalls, kNsysRuntimeTable, &SelectNsysApiCalls, 0));
  if (HasNsysColumn(db, kNsysNvtxTable, "domainId")) {
    RETURN_IF_ERROR(
        add(1, kNvtxDomains, kNsysNvtxTable, &SelectNsysNvtxDomains, kNsysNvtxDomainTextColumns));
  }
  RETURN_IF_ERROR(add(1, kNvtx, kNsysNvtxTable, &SelectNsysNvtx, kNsysNvtxTextColumns));
  // The host side: OS calls and scheduling on the GPU worker (the API/NVTX one carries the GIL
  // ranges). The Python samples are read after the scan (FinishNsysHostTables).
  RETURN_IF_ERROR(add(0, kOsCalls, kNsysOsCallTable, &SelectNsysOsCalls, 0));
  // The profiler's own threads' scheduling is left out: nsys's Python sampler wakes every period
  // and makes most of the table (95% on the shared GIL export), and profiler threads are never
  // blamed (nsys_sched_profiler_threads).
  if (db.HasTable(kNsysSchedTable)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> profiler, NsysProfilerThreads(db));
    ASSIGN_OR_RETURN(NsysSelect s, SelectNsysSched(db, profiler));
    scan.Add(0, kSched, std::move(s.columns), std::move(s.from), static_cast<int>(s.chosen.size()),
             0);
    ctx.builder.diagnostics().Add(DiagCode::kNsysSchedProfilerThreads,
                                  static_cast<int64_t>(profiler.size()));
  }
  return scan.Run([&ctx](const NsysChunk& chunk) {
    const char* table = ScanTable(static_cast<ScanTag>(chunk.tag));
    if (chunk.wrong_type_rows > 0 && table != nullptr) {
      ctx.counts.wrong_type_rows[table] += chunk.wrong_type_rows;
    }
    switch (chunk.tag) {
      case kKernels:
        AddNsysKernelRows(ctx, chunk);
        break;
      case kMemcpys:
        AddNsysMemcpyRows(ctx, chunk);
        break;
      case kMemsets:
        AddNsysMemsetRows(ctx, chunk);
        break;
      case kApiCalls:
        AddNsysApiCallRows(ctx, chunk);
        break;
      case kNvtxDomains:
        AddNsysNvtxDomainRows(ctx, chunk);
        break;
      case kNvtx:
        AddNsysNvtxRows(ctx, chunk);
        break;
      case kOsCalls:
        AddNsysOsCallRows(ctx, chunk);
        break;
      case kSched:
        AddNsysSchedRows(ctx, chunk);
        break;
    }
    return ctx.strings.status();
  });
}

void AddDropDiagnostics(const NsysContext& ctx, const NsysStrings& strings, Diagnostics& d) {
  const NsysCounts& c = ctx.counts;
  d.Add(DiagCode::kNsysApiRowOtherClass, c.api_other_class);
  d.Add(DiagCode::kNvtxRangeWithoutEnd, c.nvtx_without_end);
  d.Add(DiagCode::kNvtxMarkIgnored, c.nvtx_marks);
  d.Add(DiagCode::kNvtxEventIgnored, c.nvtx_other);
  d.Add(DiagCode::kNsysUnknownStringId, strings.unknown_ids());
  d.Add(DiagCode::kNsysGilRanges, c.gil_ranges);
  d.Add(DiagCode::kGraphKernelsWithoutCapture, c.graph_kernels_without_capture,
        "their nodes have no row in CUDA_GRAPH_NODE_EVENTS");
  for (const auto& [table, rows] : c.wrong_type_rows) {
    d.Add(DiagCode::kNsysValueWrongType, rows, table);
  }
  for (const auto& [table, rows] : c.out_of_range_rows) {
    d.Add(DiagCode::kNsysValueOutOfRange, rows, table);
  }
}

void ReserveRows(const SqliteDb& db, TraceBuilder& builder) {
  std::error_code ec;
  const auto file_bytes = std::filesystem::file_size(db.path(), ec);
  const int64_t max_rows = ec ? 0 : static_cast<int64_t>(file_bytes) / kMinBytesPerRow;
  auto rows = [&](const char* table) { return EstimateRowCount(db, table, max_rows); };
  builder.Reserve(rows(kNsysKernelTable), rows(kNsysMemcpyTable) + rows(kNsysMemsetTable),
                  rows(kNsysRuntimeTable), rows(kNsysNvtxTable));
}

}  // namespace

bool SniffNsysSqlite(std::string_view first_bytes) {
  static constexpr std::string_view kSqliteMagic("SQLite format 3\0", 16);
  return first_bytes.starts_with(kSqliteMagic);
}

namespace {

StatusOr<Trace> ImportMappedNsysSqlite(const std::string& path) {
  ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::OpenReadOnly(path));
  RETURN_IF_ERROR(CheckIsNsysExport(db));
  ASSIGN_OR_RETURN(NsysExportInfo info, ReadExportInfo(db));
  RETURN_IF_ERROR(CheckSchemaVersion(path, info));
  RETURN_IF_ERROR(CheckHasCudaActivity(db));
  RETURN_IF_ERROR(CheckHasStringIds(db));

  TraceBuilder builder;
  DescribeSource(path, info, builder);
  ReserveRows(db, builder);
  NsysEnums enums;
  RETURN_IF_ERROR(enums.Load(db));
  NsysStrings strings(db, builder);
  RETURN_IF_ERROR(strings.Init());
  NsysContext ctx{db, builder, strings, enums, {}, {}, {}, {}, {}, {}};
  ASSIGN_OR_RETURN(ctx.graph_nodes, ReadNsysGraphNodes(db));

  RETURN_IF_ERROR(ReadLargeTables(ctx));
  RETURN_IF_ERROR(ImportNsysGraphTraces(ctx));
  RETURN_IF_ERROR(ReadNsysDevices(ctx));
  RETURN_IF_ERROR(FinishNsysHostTables(ctx));
  RETURN_IF_ERROR(ReadNsysProcessesAndThreads(ctx));
  RETURN_IF_ERROR(ReadNsysGpuMetrics(ctx));
  RETURN_IF_ERROR(ReadNsysMemoryUsage(ctx));
  RETURN_IF_ERROR(strings.status());

  Diagnostics& d = builder.diagnostics();
  AddDropDiagnostics(ctx, strings, d);
  if (!db.HasTable(kNsysKernelTable) && !db.HasTable(kNsysMemcpyTable) &&
      !db.HasTable(kNsysMemsetTable) && !db.HasTable(kNsysGraphTraceTable)) {
    d.Add(DiagCode::kNsysNoGpuActivity);
  }
  Trace trace = builder.Finish();
  RETURN_IF_ERROR(ReadNsysGraphCreations(db, trace));
  return trace;
}

}  // namespace

StatusOr<Trace> ImportNsysSqlite(const std::string& path) {
  // SQLite reads the export through a memory map: a file cut shorter meanwhile reads as zeros
  // past its new end (base/mapped_reads.h), and is refused here, whatever SQLite made of them.
  const MappedReadCheck cut(path);
  StatusOr<Trace> trace = ImportMappedNsysSqlite(path);
  RETURN_IF_ERROR(cut.Check());
  return trace;
}

}  // namespace sightline
