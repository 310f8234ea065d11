#include "importers/nsys/nsys_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace sightline {
namespace {

// Parses "3.16.1" (or "3.16") into major and minor; false when it does not start with two numbers.
bool ParseVersion(std::string_view text, int* major, int* minor) {
  const char* p = text.data();
  const char* end = p + text.size();
  auto r1 = std::from_chars(p, end, *major);
  if (r1.ec != std::errc() || r1.ptr == end || *r1.ptr != '.') return false;
  auto r2 = std::from_chars(r1.ptr + 1, end, *minor);
  return r2.ec == std::errc();
}

bool HasColumn(const std::vector<std::string>& columns, std::string_view name) {
  return std::find(columns.begin(), columns.end(), name) != columns.end();
}

}  // namespace

Status CheckIsNsysExport(const SqliteDb& db) {
  if (db.HasTable(kNsysMetaTable) || db.HasTable(kNsysOldMetaTable) ||
      db.HasTable(kNsysStringTable)) {
    return Status::Ok();
  }
  for (const std::string& table : db.tables()) {
    if (table.starts_with("CUPTI_ACTIVITY_KIND_")) return Status::Ok();
  }
  return InvalidInputError(fmt::format(
      "{}: a SQLite database, but not an Nsight Systems export (it has no META_DATA_EXPORT, "
      "StringIds or CUPTI_ACTIVITY_KIND_* tables). Sightline reads the output of "
      "`nsys export --type sqlite -o FILE.sqlite FILE.nsys-rep`",
      db.path()));
}

StatusOr<NsysExportInfo> ReadExportInfo(SqliteDb& db) {
  NsysExportInfo info;
  if (db.HasTable("TARGET_INFO_SYSTEM_ENV")) {
    ASSIGN_OR_RETURN(std::vector<std::string> env, db.Columns("TARGET_INFO_SYSTEM_ENV"));
    if (HasColumn(env, "name") && HasColumn(env, "value")) {
      ASSIGN_OR_RETURN(
          SqliteStatement stmt,
          db.Prepare("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1"));
      if (stmt.Step() && !stmt.IsNull(0)) info.host_name = std::string(stmt.Text(0));
      RETURN_IF_ERROR(stmt.status());
    }
  }
  // Exports before 2024 keep the same rows in EXPORT_META_DATA.
  const char* meta = db.HasTable(kNsysMetaTable)      ? kNsysMetaTable
                     : db.HasTable(kNsysOldMetaTable) ? kNsysOldMetaTable
                                                      : kNsysMetaTable;
  ASSIGN_OR_RETURN(std::vector<std::string> columns, db.Columns(meta));
  if (!HasColumn(columns, "name") || !HasColumn(columns, "value")) return info;
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db.Prepare(std::string("SELECT name, value FROM ") + meta +
                              " WHERE name IN "
                              "('EXPORT_SCHEMA_VERSION', 'EXPORT_SCHEMA_VERSION_MAJOR', "
                              "'EXPORT_SCHEMA_VERSION_MINOR', 'EXPORT_PRODUCT_NAME', "
                              "'EXPORT_PRODUCT_VERSION')"));
  std::string major_text, minor_text;
  while (stmt.Step()) {
    const std::string_view name = stmt.Text(0);
    std::string value(stmt.Text(1));
    if (name == "EXPORT_SCHEMA_VERSION")
      info.schema_version = std::move(value);
    else if (name == "EXPORT_SCHEMA_VERSION_MAJOR")
      major_text = std::move(value);
    else if (name == "EXPORT_SCHEMA_VERSION_MINOR")
      minor_text = std::move(value);
    else if (name == "EXPORT_PRODUCT_NAME")
      info.product_name = std::move(value);
    else if (name == "EXPORT_PRODUCT_VERSION")
      info.product_version = std::move(value);
  }
  RETURN_IF_ERROR(stmt.status());
  if (info.schema_version.empty() && !major_text.empty()) {
    info.schema_version = minor_text.empty() ? major_text : major_text + "." + minor_text;
  }
  if (!info.schema_version.empty() &&
      !ParseVersion(info.schema_version, &info.major, &info.minor)) {
    // A version we cannot parse: keep the text for messages, take what leads it as the major.
    int major = -1;
    std::from_chars(info.schema_version.data(),
                    info.schema_version.data() + info.schema_version.size(), major);
    info.major = major;
  }
  return info;
}

Status CheckSchemaVersion(const std::string& path, const NsysExportInfo& info) {
  if (info.schema_version.empty() || info.major == kNsysSupportedMajor) return Status::Ok();
  return UnimplementedError(fmt::format(
      "{}: Nsight Systems export schema version {} is not supported; Sightline reads schema "
      "{}.x (checked on {}.{} to {}.{}). Export the .nsys-rep again with an Nsight Systems "
      "release that writes schema {}.x, or report this version to the Sightline developers",
      path, info.schema_version, kNsysSupportedMajor, kNsysSupportedMajor, kNsysTestedMinorLow,
      kNsysSupportedMajor, kNsysTestedMinorHigh, kNsysSupportedMajor));
}

Status CheckHasCudaActivity(const SqliteDb& db) {
  for (const char* table :
       {kNsysKernelTable, kNsysMemcpyTable, kNsysMemsetTable, kNsysRuntimeTable}) {
    if (db.HasTable(table)) return Status::Ok();
  }
  return InvalidInputError(fmt::format(
      "{}: this Nsight Systems export has no CUDA activity (no CUPTI_ACTIVITY_KIND_KERNEL, "
      "_MEMCPY, _MEMSET or _RUNTIME table), so there is nothing to analyze. Profile with CUDA "
      "tracing on, e.g. `nsys profile -t cuda,nvtx -o report python app.py`, then "
      "`nsys export --type sqlite report.nsys-rep`",
      db.path()));
}

bool HasNsysColumn(SqliteDb& db, const std::string& table, std::string_view column) {
  StatusOr<std::vector<std::string>> columns = db.Columns(table);
  return columns.ok() && HasColumn(*columns, column);
}

StatusOr<NsysSelect> BuildNsysSelect(SqliteDb& db, const std::string& table,
                                     std::span<const NsysColumn> columns, std::string_view where) {
  ASSIGN_OR_RETURN(std::vector<std::string> have, db.Columns(table));
  NsysSelect select;
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string_view names = columns[i].names;
    std::string found;
    while (!names.empty() && found.empty()) {
      const size_t bar = names.find('|');
      const std::string_view name = names.substr(0, bar);
      if (HasColumn(have, name)) found = std::string(name);
      names = bar == std::string_view::npos ? std::string_view() : names.substr(bar + 1);
    }
    if (found.empty() && columns[i].required) {
      return InvalidInputError(fmt::format(
          "{}: table {} has no column {}; this Nsight Systems export schema is not supported "
          "(export it again with a current nsys, or report the schema version)",
          db.path(), table, columns[i].names));
    }
    if (i > 0) select.columns += ", ";
    const char* null_as = columns[i].null_as;
    if (found.empty()) {
      select.columns += null_as != nullptr ? null_as : "NULL";
    } else if (null_as != nullptr) {
      select.columns += fmt::format("ifnull({}, {})", QuoteIdentifier(found), null_as);
    } else {
      select.columns += QuoteIdentifier(found);
    }
    select.chosen.push_back(std::move(found));
    select.null_as.push_back(null_as);
  }
  select.from = " FROM " + QuoteIdentifier(table);
  if (where.empty()) select.table = table;
  if (!where.empty()) select.from += fmt::format(" WHERE {}", where);
  select.sql = "SELECT " + select.columns + select.from;
  return select;
}

int64_t EstimateRowCount(const SqliteDb& db, const std::string& table, int64_t max_rows) {
  if (!db.HasTable(table)) return 0;
  StatusOr<int64_t> rows =
      db.QueryInt64(fmt::format("SELECT max(rowid) FROM {}", QuoteIdentifier(table)), 0);
  // A failure here (a table without rowid) only loses the hint; reading the rows reports errors.
  if (!rows.ok()) return 0;
  return std::clamp<int64_t>(*rows, 0, max_rows);
}

}  // namespace sightline
