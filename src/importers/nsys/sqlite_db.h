// A thin RAII layer over the SQLite C API for the nsys importer: a read-only connection, the
// table/column catalogue (nsys creates a table only when it has rows, so every read checks first),
// and prepared statements whose errors become a Status that names the file and says what to do.
// The file is untrusted: it is opened as named and immutable (sqlite_input.h), and each connection
// has a guard (sqlite_guard.h) that bounds its queries and refuses what is not a plain table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/status.h"
#include "importers/nsys/sqlite_guard.h"

struct sqlite3;
struct sqlite3_stmt;

namespace sightline {

// One prepared statement. Read rows with `while (stmt.Step()) {...}` and then check status():
// Step() returns false both at the end and on an error, so the row loop stays branch-light.
class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  bool Step();
  // OK after a clean end of rows; the SQLite error (naming the file) otherwise.
  const Status& status() const { return status_; }
  // Rewinds for another run with new bindings; clears the status.
  void Reset();
  void BindInt64(int index, int64_t value);  // index is 1-based, as in SQLite

  bool IsNull(int col) const;
  // True when columns [0, n) all hold integers (not text, a real, a blob or NULL), so that Int64
  // reads what is there instead of coercing it (SQLite reads 'abc' as 0).
  bool AllIntegers(int n) const;
  int64_t Int64(int col) const;
  int32_t Int32(int col) const { return static_cast<int32_t>(Int64(col)); }
  // True when the column holds an integer that Int32 returns unchanged (NULL reads as 0: fits).
  bool FitsInt32(int col) const {
    const int64_t v = Int64(col);
    return v >= INT32_MIN && v <= INT32_MAX;
  }
  // Int64, or `fallback` when the value is NULL.
  int64_t Int64Or(int col, int64_t fallback) const { return IsNull(col) ? fallback : Int64(col); }
  // Valid until the next Step()/Reset(); empty for NULL.
  std::string_view Text(int col) const;

 private:
  friend class SqliteDb;
  SqliteStatement(sqlite3* db, std::string path, sqlite3_stmt* stmt,
                  std::shared_ptr<SqliteGuard> guard)
      : db_(db), path_(std::move(path)), stmt_(stmt), guard_(std::move(guard)) {}

  sqlite3* db_ = nullptr;  // the connection, for error messages
  std::string path_;
  sqlite3_stmt* stmt_ = nullptr;
  // The connection's guard, shared: its progress handler may run while this statement steps.
  std::shared_ptr<SqliteGuard> guard_;
  Status status_;
};

struct SqliteReadOptions {
  // Virtual-machine steps one connection may take over all its queries; 0: from the database's
  // size (DefaultSqliteStepBudget). Tests set a small one.
  int64_t max_steps = 0;
};

class SqliteDb {
 public:
  // Opens `path` read-only and immutable (sqlite_input.h) and loads the catalogue. NotFound when
  // the file does not exist; InvalidInput when it is not a readable SQLite database (corrupt,
  // truncated, encrypted) or has unfinished writes beside it (a hot journal, a WAL). A gzip'd or
  // zstd'd database is decompressed into memory (within the input limit) and opened there.
  // Views, virtual tables and tables with generated columns are listed as tables, so that the
  // importer reads them, and every read of one is refused with an error that says what it is.
  static StatusOr<SqliteDb> OpenReadOnly(const std::string& path,
                                         const SqliteReadOptions& options = {});
  // Another connection to the same database (for scans on other threads), with the catalogue and
  // budget of this one (a budget of its own); a decompressed image is shared, not decompressed
  // again.
  StatusOr<SqliteDb> OpenAgain() const;

  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  // The decompressed database SQLite reads in place; null when it reads the file.
  const std::string* image() const { return image_.get(); }
  bool HasTable(std::string_view table) const { return tables_.count(std::string(table)) > 0; }
  const std::unordered_set<std::string>& tables() const { return tables_; }
  // Column names of a table (read when the database is opened). Empty when the table does not
  // exist; the refusal when it is not a plain table (a view, ...).
  StatusOr<std::vector<std::string>> Columns(const std::string& table);

  StatusOr<SqliteStatement> Prepare(std::string_view sql) const;
  // Runs a query that yields one integer (e.g. SELECT max(rowid) ...); `fallback` for no row/NULL.
  StatusOr<int64_t> QueryInt64(std::string_view sql, int64_t fallback) const;

  Status ErrorFor(int rc, std::string_view what) const;

 private:
  SqliteDb(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  // Opens `name` (a URI, or ":memory:" for an image), installs the guard and, when `from` is null,
  // loads the catalogue (else copies from's).
  static StatusOr<SqliteDb> Open(const std::string& path, const std::string& name,
                                 std::shared_ptr<std::string> image, int64_t budget_steps,
                                 const SqliteDb* from);
  Status LoadCatalogue();

  std::string path_;
  std::string name_;  // what SQLite opened: our URI for a file, ":memory:" for an image
  sqlite3* db_ = nullptr;
  // The decompressed database when the file was compressed; SQLite reads it in place.
  std::shared_ptr<std::string> image_;
  std::shared_ptr<SqliteGuard> guard_;
  std::unordered_set<std::string> tables_;
  std::unordered_map<std::string, std::vector<std::string>> columns_;
};

// The Status for SQLite result code `rc` on connection `db` (may be null), naming the file and
// saying what to do.
Status SqliteError(sqlite3* db, const std::string& path, int rc, std::string_view what);

// Quotes an SQL identifier: "name" with inner quotes doubled.
std::string QuoteIdentifier(std::string_view name);
// Quotes an SQL string literal: 'text' with inner quotes doubled.
std::string QuoteString(std::string_view text);

}  // namespace sightline
