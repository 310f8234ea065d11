// The tables of an SQLite database as `sightline redact` copies and scans them
// (exporters/redact_nsys.h): the real tables only (no view, trigger, virtual table or SQLite's own
// sqlite_* tables), their stored columns with the affinity of their declared type, and how to read
// their rowids; and a prepared statement on a bare connection (the copy, built in memory, is no
// SqliteDb).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "importers/nsys/sqlite_db.h"

namespace sightline {

// A prepared statement on a raw connection (the copy has no SqliteDb); errors name `path`.
class RawStatement {
 public:
  static StatusOr<RawStatement> Prepare(sqlite3* db, const std::string& path,
                                        const std::string& sql);
  RawStatement(RawStatement&& o) noexcept
      : db_(o.db_), path_(std::move(o.path_)), st_(std::exchange(o.st_, nullptr)) {}
  RawStatement& operator=(RawStatement&&) = delete;
  ~RawStatement() { sqlite3_finalize(st_); }

  // True for a row; false at the end, with `status` set on an error.
  bool Step(Status* status);
  sqlite3_stmt* get() const { return st_; }
  std::string_view Text(int col) const {
    const unsigned char* t = sqlite3_column_text(st_, col);
    return t == nullptr ? std::string_view()
                        : std::string_view(reinterpret_cast<const char*>(t),
                                           static_cast<size_t>(sqlite3_column_bytes(st_, col)));
  }
  std::string_view Blob(int col) const {
    const void* b = sqlite3_column_blob(st_, col);
    return b == nullptr ? std::string_view()
                        : std::string_view(static_cast<const char*>(b),
                                           static_cast<size_t>(sqlite3_column_bytes(st_, col)));
  }

 private:
  RawStatement(sqlite3* db, std::string path, sqlite3_stmt* st)
      : db_(db), path_(std::move(path)), st_(st) {}
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* st_;
};

struct SqliteColumn {
  std::string name;
  std::string affinity;  // INTEGER, TEXT, REAL, NUMERIC or "" (none, as BLOB)
  bool rowid_alias = false;
};

struct SqliteTable {
  std::string name;
  std::vector<SqliteColumn> columns;
  std::string rowid;  // how to select the rowid ("rowid", "_rowid_", "oid"); "" when none is
                      // needed (an INTEGER PRIMARY KEY carries it) or there is none
};

// The tables of `db` (`path` names it in errors); `others` counts the schema's other entries
// (views, triggers, indexes but SQLite's own, virtual tables), listed in `skipped` (type, name)
// when given.
StatusOr<std::vector<SqliteTable>> ReadSqliteTables(
    sqlite3* db, const std::string& path, int64_t* others,
    std::vector<std::pair<std::string, std::string>>* skipped);

// "SELECT rowid, "a", "b" FROM "t"": the rowid (when `t` has one to copy) and every column.
std::string SelectAllColumns(const SqliteTable& t);

// The index of column `name` in t.columns, or -1.
int SqliteColumnIndex(const SqliteTable& t, std::string_view name);

}  // namespace sightline
