#include "query/query_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "base/file_io.h"
#include "base/strings.h"
#include "importers/nsys/sqlite_input.h"
#include "query/query_schema.h"

namespace sightline {

// What bounds one connection's statements: a deadline the progress handler checks, and what the
// authorizer refused last (for the message).
struct QueryGuard {
  std::chrono::steady_clock::time_point deadline;
  double seconds = 0;
  bool timed_out = false;
  std::string denied;
};

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kStepsPerCheck = 10000;
constexpr double kOpenSeconds = 10.0;  // reading the schema of a database being opened

int ProgressHandler(void* context) {
  auto* guard = static_cast<QueryGuard*>(context);
  if (Clock::now() < guard->deadline) return 0;
  guard->timed_out = true;
  return 1;  // SQLite stops the statement with SQLITE_INTERRUPT
}

bool IsOneOf(const char* name, std::initializer_list<const char*> names) {
  if (name == nullptr) return false;
  for (const char* n : names) {
    if (sqlite3_stricmp(name, n) == 0) return true;
  }
  return false;
}

// Reads only: a SELECT (with CTEs, recursive ones bounded by the time limit) over the tables, the
// built-in functions but load_extension, and the PRAGMAs that describe tables.
int Authorizer(void* context, int action, const char* a, const char* b, const char* /*db*/,
               const char* /*trigger*/) {
  auto* guard = static_cast<QueryGuard*>(context);
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      if (IsOneOf(b, {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"})) {
        guard->denied = fmt::format("the function {}()", b);
        return SQLITE_DENY;
      }
      return SQLITE_OK;
    case SQLITE_PRAGMA:
      if (IsOneOf(a, {"table_info", "table_xinfo", "table_list"})) return SQLITE_OK;
      guard->denied = fmt::format("PRAGMA {}", a == nullptr ? "" : a);
      return SQLITE_DENY;
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      guard->denied = "ATTACH and DETACH (no other file is opened)";
      return SQLITE_DENY;
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      // The PRAGMA functions (pragma_table_info(), pragma_table_list) ask to update the rows of
      // sqlite_master they read; nothing can write on this connection (read-only, query_only,
      // and Run refuses a statement that is not read-only), so that is let through.
      if (action == SQLITE_UPDATE && IsOneOf(a, {"sqlite_master"})) return SQLITE_OK;
      guard->denied = "writing (the database is read-only)";
      return SQLITE_DENY;
    default:
      guard->denied =
          fmt::format("changing the schema, transactions and other statements that do not read");
      return SQLITE_DENY;
  }
}

// What a connection of ours allows, whatever the file says: no code from the schema, no views or
// triggers, no extensions, no attached files, no writes.
void Harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  // No value a question makes may pass 64 MiB (randomblob(1e9), printf('%.*c', 1e9, 'x')); the
  // database's own values are names and numbers. Sorts and groupings spill to temporary files.
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 64 << 20);
  sqlite3_exec(db, "PRAGMA temp_store = FILE", nullptr, nullptr, nullptr);
  sqlite3_exec(db, "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
  // No memory map: pages read through SQLite's small cache are as fast here (a scan of 10^6
  // kernels: 0.7-0.9 s against 0.9-1.1 s), and a mapped file's pages count in the process's
  // memory (296 MB against 11 MB for that scan).
}

// Opens `path` read-only and immutable (the file named, no journal read or written), hardened,
// with `guard` as progress handler and authorizer.
Status OpenHardened(const std::string& path, QueryGuard* guard, sqlite3** out) {
  ASSIGN_OR_RETURN(std::string uri, ImmutableSqliteUri(path));
  const int rc = sqlite3_open_v2(
      uri.c_str(), out, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    return InvalidInputError(fmt::format("{}: cannot open as an SQLite database: {}", path,
                                         *out != nullptr ? sqlite3_errmsg(*out) : "out of memory"));
  }
  Harden(*out);
  sqlite3_progress_handler(*out, kStepsPerCheck, ProgressHandler, guard);
  sqlite3_set_authorizer(*out, Authorizer, guard);
  return Status::Ok();
}

void StartClock(QueryGuard* guard, double seconds) {
  guard->seconds = seconds;
  guard->timed_out = false;
  guard->denied.clear();
  const double s = std::clamp(seconds, 0.0, 1e7);
  guard->deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

Value ColumnValue(sqlite3_stmt* st, int col) {
  switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER:
      return static_cast<int64_t>(sqlite3_column_int64(st, col));
    case SQLITE_FLOAT:
      return sqlite3_column_double(st, col);
    case SQLITE_TEXT: {
      const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
      return std::string(t, static_cast<size_t>(sqlite3_column_bytes(st, col)));
    }
    case SQLITE_BLOB: {
      const auto* b = static_cast<const unsigned char*>(sqlite3_column_blob(st, col));
      const int n = sqlite3_column_bytes(st, col);
      std::string hex = "x'";
      for (int i = 0; i < n; ++i) hex += fmt::format("{:02x}", b[i]);
      return hex + "'";
    }
    default:
      return std::monostate{};
  }
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The words of `sql` (identifiers, quoted or not), lower-cased.
std::set<std::string> WordsOf(std::string_view sql) {
  std::set<std::string> words;
  std::string w;
  for (size_t i = 0; i <= sql.size(); ++i) {
    const char c = i < sql.size() ? sql[i] : ' ';
    if (IsIdentChar(c)) {
      w += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    } else if (!w.empty()) {
      words.insert(w);
      w.clear();
    }
  }
  return words;
}

}  // namespace

QueryDb::QueryDb(QueryDb&& o) noexcept
    : path_(std::move(o.path_)),
      db_(std::exchange(o.db_, nullptr)),
      guard_(std::move(o.guard_)),
      catalogue_(std::move(o.catalogue_)) {}

QueryDb& QueryDb::operator=(QueryDb&& o) noexcept {
  if (this != &o) {
    sqlite3_close_v2(db_);
    path_ = std::move(o.path_);
    db_ = std::exchange(o.db_, nullptr);
    guard_ = std::move(o.guard_);
    catalogue_ = std::move(o.catalogue_);
  }
  return *this;
}

QueryDb::QueryDb() = default;
QueryDb::~QueryDb() { sqlite3_close_v2(db_); }

bool QueryDb::LooksLikeQueryDb(const std::string& path) {
  StatusOr<std::string> head = ReadFilePrefix(path, 16);
  if (!head.ok() || *head != std::string("SQLite format 3\0", 16)) return false;
  QueryGuard guard;
  sqlite3* db = nullptr;
  bool ours = false;
  if (OpenHardened(path, &guard, &db).ok()) {
    StartClock(&guard, kOpenSeconds);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_list WHERE name = 'sightline_meta'",
                           -1, &st, nullptr) == SQLITE_OK) {
      ours = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
  }
  sqlite3_close_v2(db);
  return ours;
}

StatusOr<QueryDb> QueryDb::Open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return NotFoundError(fmt::format("{}: no such file", path));
  }
  QueryDb db;
  db.path_ = path;
  db.guard_ = std::make_unique<QueryGuard>();
  RETURN_IF_ERROR(OpenHardened(path, db.guard_.get(), &db.db_));
  NoteInputFile(path);
  StartClock(db.guard_.get(), kOpenSeconds);
  RETURN_IF_ERROR(db.LoadCatalogue());
  RETURN_IF_ERROR(db.CheckOurs());
  return db;
}

Status QueryDb::LoadCatalogue() {
  auto refuse = [&](std::string what) {
    return InvalidInputError(fmt::format(
        "{}: not a database `sightline query --save` wrote: {}; build it again with `sightline "
        "query TRACE... --save DB`",
        path_, what));
  };
  std::vector<std::string> names;
  {
    StatusOr<QueryResult> tables = Run(
        "SELECT name, type FROM pragma_table_list WHERE schema = 'main'", {kOpenSeconds, 1 << 20});
    if (!tables.ok()) return refuse(tables.status().message());
    if (tables->truncated) return refuse("more than a million tables");
    for (const auto& row : tables->rows) {
      const auto* name = std::get_if<std::string>(&row[0]);
      const auto* type = std::get_if<std::string>(&row[1]);
      if (name == nullptr || type == nullptr) return refuse("a schema entry without a name");
      if (Lower(*name) == "sqlite_schema" || Lower(*name) == "sqlite_temp_schema") continue;
      if (*type != "table") return refuse(fmt::format("{} is a {}, not a table", *name, *type));
      names.push_back(*name);
    }
  }
  // The schema's tables in its order, then the report's, by name.
  auto order = [](const std::string& name) {
    const auto& defs = QueryTables();
    for (size_t i = 0; i < defs.size(); ++i) {
      if (name == defs[i].name) return i;
    }
    return defs.size();
  };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const size_t oa = order(a), ob = order(b);
    return oa != ob ? oa < ob : a < b;
  });
  for (const std::string& name : names) {
    StatusOr<QueryResult> cols = Run("SELECT name, hidden FROM pragma_table_xinfo(?1)",
                                     {kOpenSeconds, 1 << 16}, {{"1", name}});
    if (!cols.ok()) return refuse(cols.status().message());
    QueryCatalogueTable& t = catalogue_.emplace_back();
    t.name = name;
    for (const auto& row : cols->rows) {
      const auto* hidden = std::get_if<int64_t>(&row[1]);
      if (hidden != nullptr && *hidden != 0) {
        return refuse(fmt::format("table {} has generated (computed) columns", name));
      }
      const auto* col = std::get_if<std::string>(&row[0]);
      t.columns.push_back(col != nullptr ? *col : std::string());
    }
  }
  return Status::Ok();
}

Status QueryDb::CheckOurs() {
  auto refuse = [&](std::string what) {
    return InvalidInputError(fmt::format(
        "{}: not a database `sightline query --save` of this version wrote: {}; build it again "
        "with `sightline query TRACE... --save DB`",
        path_, what));
  };
  for (const QueryTableDef& def : QueryTables()) {
    auto it = std::find_if(catalogue_.begin(), catalogue_.end(),
                           [&](const QueryCatalogueTable& t) { return t.name == def.name; });
    if (it == catalogue_.end()) return refuse(fmt::format("it has no table {}", def.name));
    std::vector<std::string> want;
    for (const QueryColumnDef& c : def.columns) want.emplace_back(c.name);
    if (it->columns != want) {
      return refuse(fmt::format("its table {} has other columns than schema version {}'s", def.name,
                                kQuerySchemaVersion));
    }
  }
  ASSIGN_OR_RETURN(
      QueryResult version,
      Run("SELECT value FROM sightline_meta WHERE key = 'schema_version'", {kOpenSeconds, 2}));
  const std::string want = std::to_string(kQuerySchemaVersion);
  if (version.rows.size() != 1 || std::get_if<std::string>(&version.rows[0][0]) == nullptr ||
      std::get<std::string>(version.rows[0][0]) != want) {
    return refuse(fmt::format("its schema_version is not {}", want));
  }
  return Status::Ok();
}

StatusOr<QueryResult> QueryDb::Run(std::string_view sql, const QueryLimits& limits,
                                   const QueryParams& params) const {
  if (db_ == nullptr) return InvalidArgumentError("no query database is open");
  QueryGuard* guard = guard_.get();
  StartClock(guard, limits.seconds);
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  if (sql.size() > 1'000'000) return InvalidArgumentError("the query is longer than 1 MB");
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), 0, &raw, &tail);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> st(raw, sqlite3_finalize);
  if (rc != SQLITE_OK) {
    std::string message = sqlite3_errmsg(db_);
    if (!guard->denied.empty()) {
      return InvalidArgumentError(
          fmt::format("the query is refused: {} is not allowed; a query only reads (SELECT, WITH)",
                      guard->denied));
    }
    if (guard->timed_out) {
      return InvalidArgumentError(
          fmt::format("the query was stopped after the time limit of {} s (--timeout raises it)",
                      limits.seconds));
    }
    auto list_tables = [&] {
      std::string names;
      for (const QueryCatalogueTable& t : catalogue_) {
        names += names.empty() ? t.name : ", " + t.name;
      }
      return names;
    };
    if (message.rfind("no such table", 0) == 0) {
      return InvalidArgumentError(
          fmt::format("{}; the tables are: {} (docs/query.md)", message, list_tables()));
    }
    if (message.rfind("no such column", 0) == 0) {
      const std::set<std::string> words = WordsOf(sql);
      std::string named;
      for (const QueryCatalogueTable& t : catalogue_) {
        if (!words.contains(Lower(t.name))) continue;
        std::string cols;
        for (const std::string& c : t.columns) cols += cols.empty() ? c : ", " + c;
        named += fmt::format("; columns of {}: {}", t.name, cols);
      }
      if (named.empty()) named = fmt::format("; the tables are: {}", list_tables());
      return InvalidArgumentError(fmt::format("{}{} (docs/query.md)", message, named));
    }
    return InvalidArgumentError(fmt::format("the query is not valid SQL: {}", message));
  }
  if (raw == nullptr) return InvalidArgumentError("the query is empty");
  for (const char* p = tail; p != nullptr && p < sql.data() + sql.size(); ++p) {
    if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r' && *p != ';') {
      return InvalidArgumentError(
          "one statement at a time: the query has text after its first "
          "statement");
    }
  }
  if (!sqlite3_stmt_readonly(raw)) {
    return InvalidArgumentError("the query is refused: it would write; a query only reads");
  }
  // Parameters: each :name the statement has must be given, and each given must be used.
  const int n_params = sqlite3_bind_parameter_count(raw);
  std::vector<bool> used(params.size(), false);
  for (int i = 1; i <= n_params; ++i) {
    const char* pname = sqlite3_bind_parameter_name(raw, i);
    const std::string name = pname == nullptr ? std::to_string(i) : std::string(pname + 1);
    auto it =
        std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.first == name; });
    if (it == params.end()) continue;  // NULL: named queries give defaults with coalesce()
    used[static_cast<size_t>(it - params.begin())] = true;
    const std::string& v = it->second;
    char* end = nullptr;
    errno = 0;
    const long long iv = std::strtoll(v.c_str(), &end, 10);
    if (!v.empty() && *end == '\0' && errno == 0) {
      sqlite3_bind_int64(raw, i, iv);
      continue;
    }
    const double dv = std::strtod(v.c_str(), &end);
    if (!v.empty() && *end == '\0' && std::isfinite(dv)) {
      sqlite3_bind_double(raw, i, dv);
    } else {
      sqlite3_bind_text(raw, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (used[i]) continue;
    std::string takes;
    for (int k = 1; k <= n_params; ++k) {
      const char* pname = sqlite3_bind_parameter_name(raw, k);
      if (pname != nullptr) takes += fmt::format("{}{}", takes.empty() ? "" : ", ", pname + 1);
    }
    return InvalidArgumentError(fmt::format("the query has no parameter :{} (it takes: {})",
                                            params[i].first, takes.empty() ? "none" : takes));
  }
  QueryResult result;
  const int ncol = sqlite3_column_count(raw);
  for (int c = 0; c < ncol; ++c) {
    const char* name = sqlite3_column_name(raw, c);
    result.columns.emplace_back(name != nullptr ? name : "");
  }
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    if (static_cast<int64_t>(result.rows.size()) >= limits.max_rows) {
      result.truncated = true;
      break;
    }
    std::vector<Value>& row = result.rows.emplace_back();
    row.reserve(static_cast<size_t>(ncol));
    for (int c = 0; c < ncol; ++c) row.push_back(ColumnValue(raw, c));
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    if (guard->timed_out) {
      return InvalidArgumentError(
          fmt::format("the query was stopped after the time limit of {} s (--timeout raises it)",
                      limits.seconds));
    }
    return InvalidArgumentError(fmt::format("the query failed: {}", sqlite3_errmsg(db_)));
  }
  return result;
}

}  // namespace sightline
