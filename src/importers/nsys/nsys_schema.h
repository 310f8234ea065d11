// What the nsys importer knows about the Nsight Systems SQLite export schema: table names, the
// export metadata (schema version, producer), which versions are supported, how GlobalIds pack
// PID and TID, and how to build a SELECT over columns that differ between schema versions.
// docs/formats/nsys.md describes the mapping in full.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "importers/nsys/sqlite_db.h"

namespace sightline {

inline constexpr char kNsysKernelTable[] = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr char kNsysMemcpyTable[] = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr char kNsysMemsetTable[] = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr char kNsysRuntimeTable[] = "CUPTI_ACTIVITY_KIND_RUNTIME";  // runtime + driver
inline constexpr char kNsysGraphTraceTable[] = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
inline constexpr char kNsysNvtxTable[] = "NVTX_EVENTS";
inline constexpr char kNsysStringTable[] = "StringIds";
inline constexpr char kNsysMetaTable[] = "META_DATA_EXPORT";
inline constexpr char kNsysOldMetaTable[] = "EXPORT_META_DATA";  // exports before 2024
inline constexpr char kNsysGpuTable[] = "TARGET_INFO_GPU";
inline constexpr char kNsysOldGpuTable[] = "TARGET_INFO_CUDA_GPU";  // older exports (early 2021)
inline constexpr char kNsysProcessTable[] = "PROCESSES";
inline constexpr char kNsysThreadNameTable[] = "ThreadNames";

// Export schema majors this importer reads, and the 3.x minors it was checked against.
inline constexpr int kNsysSupportedMajor = 3;
inline constexpr int kNsysTestedMinorLow = 16;
inline constexpr int kNsysTestedMinorHigh = 28;

// GlobalIds (globalPid, globalTid) pack the PID in bits 24..47 and the TID in bits 0..23; the
// bits above 47 identify the machine/VM and are dropped.
inline int32_t NsysPidOf(int64_t global_id) {
  return static_cast<int32_t>((global_id >> 24) & 0xFFFFFF);
}
inline int32_t NsysTidOf(int64_t global_id) { return static_cast<int32_t>(global_id & 0xFFFFFF); }

struct NsysExportInfo {
  std::string schema_version;  // "3.16.1"; empty when the export does not say
  int major = -1, minor = -1;
  std::string product_name;     // "NVIDIA Nsight Systems"
  std::string product_version;  // "2024.6.2.225"
  // TARGET_INFO_SYSTEM_ENV's Hostname (the profiled machine; in a container, the container's
  // hostname); empty when the export has none.
  std::string host_name;
};

// InvalidInput (naming the file and what to do) unless the database looks like an nsys export:
// META_DATA_EXPORT, StringIds or a CUPTI_ACTIVITY_KIND_* table.
Status CheckIsNsysExport(const SqliteDb& db);

// Reads META_DATA_EXPORT and TARGET_INFO_SYSTEM_ENV's Hostname (absent in some exports: then
// those fields stay unset).
StatusOr<NsysExportInfo> ReadExportInfo(SqliteDb& db);

// Unimplemented (naming the version) for a schema major other than kNsysSupportedMajor.
Status CheckSchemaVersion(const std::string& path, const NsysExportInfo& info);

// InvalidInput (naming the file and how to profile) when the export has none of the CUDA tables:
// no kernels, memory copies, memory sets or API calls means nothing to analyze.
Status CheckHasCudaActivity(const SqliteDb& db);

// A column the importer reads: alternatives separated by '|' (older schemas renamed some), the
// first present one wins. With `null_as` (an SQL literal) NULLs read as that value, through
// ifnull(), so that rows can be read as plain integers; a missing optional column is selected as
// `null_as` (or NULL), so that column indices stay fixed.
struct NsysColumn {
  const char* names;
  bool required = false;
  const char* null_as = nullptr;
};

struct NsysSelect {
  std::string sql;                  // "SELECT " + columns + from
  std::string columns;              // "a, ifnull(b, -1), NULL"
  std::string from;                 // " FROM t [WHERE ...]"
  std::vector<std::string> chosen;  // the column chosen for each spec; empty when not present
  // What the page reader (sqlite_pages.h) needs to read the same rows without SQLite: the table
  // and each spec's null_as; the table is empty when the SELECT has a WHERE (read through SQLite).
  std::string table;
  std::vector<const char*> null_as;
};

// Whether the table exists and has the column (false also when the catalogue cannot be read).
bool HasNsysColumn(SqliteDb& db, const std::string& table, std::string_view column);

// "SELECT a, b, NULL, ... FROM table [WHERE ...]". InvalidInput naming the file, the table and the
// column when a required column is missing.
StatusOr<NsysSelect> BuildNsysSelect(SqliteDb& db, const std::string& table,
                                     std::span<const NsysColumn> columns,
                                     std::string_view where = {});

// Rows in a table, cheaply: max(rowid), exact for the append-only tables nsys writes and O(log n)
// where COUNT(*) reads the whole table. Only a reservation hint, so it is clamped to `max_rows`
// (a bound from the file size: a hostile rowid must not reserve gigabytes) and is 0 when the table
// is absent or the query fails.
int64_t EstimateRowCount(const SqliteDb& db, const std::string& table, int64_t max_rows);

}  // namespace sightline
