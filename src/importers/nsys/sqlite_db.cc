#include "importers/nsys/sqlite_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "base/file_io.h"
#include "base/input_data.h"

namespace sightline {

// ---- SqliteStatement ----

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_),
      path_(std::move(other.path_)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      status_(other.status_) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    path_ = std::move(other.path_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    status_ = other.status_;
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

bool SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE && status_.ok()) {
    status_ = SqliteError(db_, path_, rc, fmt::format("reading rows of `{}`", sqlite3_sql(stmt_)));
  }
  return false;
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  status_ = Status::Ok();
}

void SqliteStatement::BindInt64(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}

bool SqliteStatement::IsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

bool SqliteStatement::AllIntegers(int n) const {
  for (int col = 0; col < n; ++col) {
    if (sqlite3_column_type(stmt_, col) != SQLITE_INTEGER) return false;
  }
  return true;
}

int64_t SqliteStatement::Int64(int col) const { return sqlite3_column_int64(stmt_, col); }

std::string_view SqliteStatement::Text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return {};
  return std::string_view(reinterpret_cast<const char*>(text),
                          static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

// ---- SqliteDb ----

StatusOr<SqliteDb> SqliteDb::OpenReadOnly(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return NotFoundError(fmt::format("{}: no such file", path));
  }
  ASSIGN_OR_RETURN(std::string head, ReadFilePrefix(path, 4));
  std::shared_ptr<std::string> image;
  if (CompressionOf(head) != Compression::kNone) {
    ASSIGN_OR_RETURN(std::string bytes, ReadInput(path));
    image = std::make_shared<std::string>(std::move(bytes));
  }
  return Open(path, std::move(image));
}

StatusOr<SqliteDb> SqliteDb::OpenAgain() const { return Open(path_, image_); }

StatusOr<SqliteDb> SqliteDb::Open(const std::string& path, std::shared_ptr<std::string> image) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(image ? ":memory:" : path.c_str(), &raw,
                                 SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  SqliteDb db(path, raw);  // owns the handle even when opening failed
  if (rc != SQLITE_OK) return db.ErrorFor(rc, "opening the database");
  if (image) {
    // Read in place: no copy, no resizing, never written (the connection is read-only).
    const int drc =
        sqlite3_deserialize(raw, "main", reinterpret_cast<unsigned char*>(image->data()),
                            static_cast<sqlite3_int64>(image->size()),
                            static_cast<sqlite3_int64>(image->size()), SQLITE_DESERIALIZE_READONLY);
    if (drc != SQLITE_OK) return db.ErrorFor(drc, "opening the decompressed database");
    db.image_ = std::move(image);
  } else {
    NoteInputFile(path);
  }
  // The file is untrusted input: no schema-defined code (triggers, views) may call functions with
  // side effects, and no writes through corrupt-schema tricks.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
#endif
  // Read pages through a memory map rather than a pread per page: on exports whose rows are small
  // (GIL ranges, OS calls) the system calls cost as much as decoding the rows.
  sqlite3_exec(raw, "PRAGMA mmap_size = 4294967296", nullptr, nullptr, nullptr);
  // The first read of the schema is where SQLite notices a file that is not a database.
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db.Prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"));
  while (stmt.Step()) db.tables_.insert(std::string(stmt.Text(0)));
  RETURN_IF_ERROR(stmt.status());
  return db;
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : path_(std::move(other.path_)),
      db_(std::exchange(other.db_, nullptr)),
      image_(std::move(other.image_)),
      tables_(std::move(other.tables_)),
      columns_(std::move(other.columns_)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    path_ = std::move(other.path_);
    db_ = std::exchange(other.db_, nullptr);
    image_ = std::move(other.image_);
    tables_ = std::move(other.tables_);
    columns_ = std::move(other.columns_);
  }
  return *this;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

StatusOr<std::vector<std::string>> SqliteDb::Columns(const std::string& table) {
  auto it = columns_.find(table);
  if (it != columns_.end()) return it->second;
  std::vector<std::string> names;
  if (HasTable(table)) {
    ASSIGN_OR_RETURN(SqliteStatement stmt,
                     Prepare(fmt::format("PRAGMA table_info({})", QuoteIdentifier(table))));
    while (stmt.Step()) names.emplace_back(stmt.Text(1));  // cid, name, type, notnull, ...
    RETURN_IF_ERROR(stmt.status());
  }
  columns_.emplace(table, names);
  return names;
}

StatusOr<SqliteStatement> SqliteDb::Prepare(std::string_view sql) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return ErrorFor(rc, fmt::format("preparing `{}`", sql));
  }
  return SqliteStatement(db_, path_, stmt);
}

StatusOr<int64_t> SqliteDb::QueryInt64(std::string_view sql, int64_t fallback) const {
  ASSIGN_OR_RETURN(SqliteStatement stmt, Prepare(sql));
  int64_t value = fallback;
  if (stmt.Step()) value = stmt.Int64Or(0, fallback);
  RETURN_IF_ERROR(stmt.status());
  return value;
}

Status SqliteDb::ErrorFor(int rc, std::string_view what) const {
  return SqliteError(db_, path_, rc, what);
}

Status SqliteError(sqlite3* db, const std::string& path, int rc, std::string_view what) {
  const int primary = rc & 0xff;
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (primary) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
    case SQLITE_RANGE:
      return InvalidInputError(fmt::format(
          "{}: not a readable SQLite database: it is corrupt or truncated (SQLite: {}). Copy the "
          "file again, or export it again with `nsys export --type sqlite`",
          path, detail));
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return IoError(
          fmt::format("{}: cannot open the file (SQLite: {}); check that it exists "
                      "and is readable",
                      path, detail));
    case SQLITE_NOMEM:
      return IoError(fmt::format("{}: out of memory while {} (SQLite: {})", path, what, detail));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return IoError(fmt::format(
          "{}: the database is locked by another program (SQLite: {}); wait for `nsys export` "
          "to finish and try again",
          path, detail));
    case SQLITE_ERROR:
      // Usually SQL that does not fit this file's schema (a missing table or column).
      return InvalidInputError(
          fmt::format("{}: unexpected Nsight Systems export schema (SQLite: {}, while {})", path,
                      detail, what));
    default:
      return IoError(
          fmt::format("{}: SQLite error while {}: {} (code {})", path, what, detail, rc));
  }
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace sightline
