#include "importers/nsys/sqlite_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "base/file_io.h"
#include "base/input_data.h"
#include "importers/nsys/sqlite_input.h"

// PRAGMA table_list (3.37) and SQLITE_DBCONFIG_ENABLE_VIEW (3.30) are what the reader's defences
// stand on.
#if SQLITE_VERSION_NUMBER < 3037000
#error "Sightline needs SQLite 3.37 or later"
#endif

namespace sightline {

// ---- SqliteStatement ----

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_),
      path_(std::move(other.path_)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      guard_(std::move(other.guard_)),
      status_(other.status_) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    path_ = std::move(other.path_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    guard_ = std::move(other.guard_);
    status_ = other.status_;
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

bool SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE && status_.ok()) {
    const std::string what = fmt::format("reading rows of `{}`", sqlite3_sql(stmt_));
    status_ = rc == SQLITE_INTERRUPT && guard_ != nullptr && guard_->exhausted
                  ? StepBudgetError(*guard_, what)
                  : SqliteError(db_, path_, rc, what);
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

StatusOr<SqliteDb> SqliteDb::OpenReadOnly(const std::string& path,
                                          const SqliteReadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return NotFoundError(fmt::format("{}: no such file", path));
  }
  ASSIGN_OR_RETURN(std::string head, ReadFilePrefix(path, 4));
  std::shared_ptr<std::string> image;
  std::string name = ":memory:";
  int64_t database_bytes = 0;
  if (CompressionOf(head) != Compression::kNone) {
    ASSIGN_OR_RETURN(std::string bytes, ReadInput(path));
    image = std::make_shared<std::string>(std::move(bytes));
    database_bytes = static_cast<int64_t>(image->size());
  } else {
    ASSIGN_OR_RETURN(name, ImmutableSqliteUri(path));
    const auto size = std::filesystem::file_size(path, ec);
    database_bytes = ec ? 0 : static_cast<int64_t>(size);
  }
  const int64_t budget =
      options.max_steps > 0 ? options.max_steps : DefaultSqliteStepBudget(database_bytes);
  return Open(path, name, std::move(image), budget, nullptr);
}

StatusOr<SqliteDb> SqliteDb::OpenAgain() const {
  return Open(path_, name_, image_, guard_->budget_steps, this);
}

StatusOr<SqliteDb> SqliteDb::Open(const std::string& path, const std::string& name,
                                  std::shared_ptr<std::string> image, int64_t budget_steps,
                                  const SqliteDb* from) {
  sqlite3* raw = nullptr;
  // SQLITE_OPEN_URI: the name is a URI we built (or ":memory:"), whatever SQLite's global setting.
  const int rc = sqlite3_open_v2(
      name.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  SqliteDb db(path, raw);  // owns the handle even when opening failed
  db.name_ = name;
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
  // The file is untrusted input: no schema-defined code may call functions with side effects, no
  // writes through corrupt-schema tricks, no view expanded and no trigger fired (none fires on a
  // read-only connection anyway; this holds if that ever changes).
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  db.guard_ = std::make_shared<SqliteGuard>();
  db.guard_->path = path;
  db.guard_->budget_steps = budget_steps;
  InstallSqliteGuard(raw, db.guard_.get());
  // Read pages through a memory map rather than a pread per page: on exports whose rows are small
  // (GIL ranges, OS calls) the system calls cost as much as decoding the rows.
  sqlite3_exec(raw, "PRAGMA mmap_size = 4294967296", nullptr, nullptr, nullptr);
  if (from != nullptr) {
    db.guard_->refused = from->guard_->refused;
    db.tables_ = from->tables_;
    db.columns_ = from->columns_;
    return db;
  }
  RETURN_IF_ERROR(db.LoadCatalogue());
  return db;
}

// Every table and view with what SQLite made of it (PRAGMA table_list: its own parse of the
// schema, not the text of sqlite_master, which a file may word to mislead), and each plain table's
// columns. The first read of the schema is also where SQLite notices a file that is not a database.
Status SqliteDb::LoadCatalogue() {
  std::vector<std::string> plain;
  {
    ASSIGN_OR_RETURN(SqliteStatement stmt, Prepare("PRAGMA main.table_list"));
    while (stmt.Step()) {  // schema, name, type, ncol, wr, strict
      std::string name(stmt.Text(1));
      const std::string_view type = stmt.Text(2);
      if (type == "table" || type == "shadow") {
        if (SqliteNameKey(name) == "sqlite_schema") continue;  // the catalogue itself
        plain.push_back(name);
      } else {
        guard_->refused[SqliteNameKey(name)] = type == "view"      ? "a view"
                                               : type == "virtual" ? "a virtual table"
                                                                   : fmt::format("a {}", type);
      }
      tables_.insert(std::move(name));
    }
    RETURN_IF_ERROR(stmt.status());
  }
  for (const std::string& table : plain) {
    ASSIGN_OR_RETURN(SqliteStatement stmt,
                     Prepare(fmt::format("PRAGMA main.table_xinfo({})", QuoteIdentifier(table))));
    std::vector<std::string> names;
    bool generated = false;
    while (stmt.Step()) {  // cid, name, type, notnull, dflt_value, pk, hidden
      // hidden: 2 and 3 are generated columns, computed by an expression the file supplies.
      if (stmt.Int64(6) != 0) {
        generated = true;
      } else {
        names.emplace_back(stmt.Text(1));
      }
    }
    RETURN_IF_ERROR(stmt.status());
    if (generated) {
      guard_->refused[SqliteNameKey(table)] = "a table with generated (computed) columns";
    } else {
      columns_.emplace(table, std::move(names));
    }
  }
  return Status::Ok();
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : path_(std::move(other.path_)),
      name_(std::move(other.name_)),
      db_(std::exchange(other.db_, nullptr)),
      image_(std::move(other.image_)),
      guard_(std::move(other.guard_)),
      tables_(std::move(other.tables_)),
      columns_(std::move(other.columns_)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    path_ = std::move(other.path_);
    name_ = std::move(other.name_);
    db_ = std::exchange(other.db_, nullptr);
    image_ = std::move(other.image_);
    guard_ = std::move(other.guard_);
    tables_ = std::move(other.tables_);
    columns_ = std::move(other.columns_);
  }
  return *this;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

StatusOr<std::vector<std::string>> SqliteDb::Columns(const std::string& table) {
  if (guard_ != nullptr) {
    auto it = guard_->refused.find(SqliteNameKey(table));
    if (it != guard_->refused.end()) {
      return RefusedTableError(path_, RefusedTable{table, it->second});
    }
  }
  auto it = columns_.find(table);
  if (it != columns_.end()) return it->second;
  return std::vector<std::string>();
}

StatusOr<SqliteStatement> SqliteDb::Prepare(std::string_view sql) const {
  sqlite3_stmt* stmt = nullptr;
  if (guard_ != nullptr) guard_->denied.clear();
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    // A view or another object that is not a plain table: said so, not "unexpected schema".
    if (guard_ != nullptr) {
      if (std::optional<RefusedTable> refused = RefusedTableIn(*guard_, sql)) {
        return RefusedTableError(path_, *refused);
      }
    }
    return ErrorFor(rc, fmt::format("preparing `{}`", sql));
  }
  return SqliteStatement(db_, path_, stmt, guard_);
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

namespace {

// `text` between two `quote`s, each quote inside doubled.
std::string Quote(std::string_view text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote) out.push_back(quote);
    out.push_back(c);
  }
  out.push_back(quote);
  return out;
}

}  // namespace

std::string QuoteIdentifier(std::string_view name) { return Quote(name, '"'); }

std::string QuoteString(std::string_view text) { return Quote(text, '\''); }

}  // namespace sightline
