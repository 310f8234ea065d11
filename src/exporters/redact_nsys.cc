#include "exporters/redact_nsys.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "base/file_io.h"
#include "base/utf8.h"
#include "importers/nsys/sqlite_db.h"

namespace sightline {
namespace {

// A prepared statement on a raw connection (the copy has no SqliteDb); errors name `path`.
class Stmt {
 public:
  static StatusOr<Stmt> Prepare(sqlite3* db, const std::string& path, const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(st);
      return SqliteError(db, path, rc, fmt::format("preparing `{}`", sql));
    }
    return Stmt(db, path, st);
  }
  Stmt(Stmt&& o) noexcept
      : db_(o.db_), path_(std::move(o.path_)), st_(std::exchange(o.st_, nullptr)) {}
  Stmt& operator=(Stmt&&) = delete;
  ~Stmt() { sqlite3_finalize(st_); }

  // True for a row; false at the end, with `status` set on an error.
  bool Step(Status* status) {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE && status->ok()) {
      *status = SqliteError(db_, path_, rc, fmt::format("running `{}`", sqlite3_sql(st_)));
    }
    return false;
  }
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
  Stmt(sqlite3* db, std::string path, sqlite3_stmt* st)
      : db_(db), path_(std::move(path)), st_(st) {}
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* st_;
};

struct Column {
  std::string name;
  std::string affinity;  // INTEGER, TEXT, REAL, NUMERIC or "" (none, as BLOB)
  bool rowid_alias = false;
};

struct Table {
  std::string name;
  std::vector<Column> columns;
  std::string rowid;  // how to select the rowid ("rowid", "_rowid_", "oid"); "" when none is
                      // needed (an INTEGER PRIMARY KEY carries it) or there is none
};

// SQLite's rules for a declared type's affinity (sqlite.org/datatype3.html, 3.1): the copy's
// columns store values as the export's did, whatever words the declaration used.
std::string AffinityOf(std::string_view declared) {
  const std::string t = [&] {
    std::string up(declared);
    for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return up;
  }();
  if (t.find("INT") != std::string::npos) return "INTEGER";
  if (t.find("CHAR") != std::string::npos || t.find("CLOB") != std::string::npos ||
      t.find("TEXT") != std::string::npos) {
    return "TEXT";
  }
  if (t.empty() || t.find("BLOB") != std::string::npos) return "";
  if (t.find("REAL") != std::string::npos || t.find("FLOA") != std::string::npos ||
      t.find("DOUB") != std::string::npos) {
    return "REAL";
  }
  return "NUMERIC";
}

bool IsVirtualTableSql(std::string_view sql) {
  while (!sql.empty() && std::isspace(static_cast<unsigned char>(sql.front())))
    sql.remove_prefix(1);
  return sql.size() >= 14 && EqualsIgnoringCase(sql.substr(0, 14), "CREATE VIRTUAL");
}

// The tables to copy (or scan) and how many other schema entries there are.
StatusOr<std::vector<Table>> ReadTables(sqlite3* db, const std::string& path, int64_t* others,
                                        std::vector<std::pair<std::string, std::string>>* skipped) {
  std::vector<Table> tables;
  Status status;
  {
    ASSIGN_OR_RETURN(Stmt st, Stmt::Prepare(db, path, "SELECT type, name, sql FROM sqlite_master"));
    while (st.Step(&status)) {
      const std::string type(st.Text(0)), name(st.Text(1));
      if (type == "table" && name.rfind("sqlite_", 0) != 0 && !IsVirtualTableSql(st.Text(2))) {
        tables.push_back(Table{name, {}, ""});
      } else if (name.rfind("sqlite_", 0) != 0 && (type != "index" || !st.Text(2).empty())) {
        ++*others;  // a view, a trigger, an index, a virtual table
        if (skipped != nullptr) skipped->emplace_back(type, name);
      }
    }
    RETURN_IF_ERROR(status);
  }
  for (Table& t : tables) {
    ASSIGN_OR_RETURN(Stmt cols, Stmt::Prepare(db, path,
                                              "SELECT name, type, pk, hidden FROM "
                                              "pragma_table_xinfo(?1)"));
    sqlite3_bind_text(cols.get(), 1, t.name.data(), static_cast<int>(t.name.size()),
                      SQLITE_TRANSIENT);
    int pk_columns = 0;
    int integer_pk = -1;
    while (cols.Step(&status)) {
      if (sqlite3_column_int(cols.get(), 3) != 0) continue;  // generated: derived, not stored
      const int pk = sqlite3_column_int(cols.get(), 2);
      if (pk > 0) {
        ++pk_columns;
        if (EqualsIgnoringCase(cols.Text(1), "INTEGER"))
          integer_pk = static_cast<int>(t.columns.size());
      }
      t.columns.push_back(Column{std::string(cols.Text(0)), AffinityOf(cols.Text(1)), false});
    }
    RETURN_IF_ERROR(status);
    // An INTEGER PRIMARY KEY is the rowid (lookups by id stay fast in the copy) unless the table is
    // WITHOUT ROWID, which gives its key an index of origin 'pk'.
    ASSIGN_OR_RETURN(
        Stmt pk_index,
        Stmt::Prepare(db, path, "SELECT count(*) FROM pragma_index_list(?1) WHERE origin = 'pk'"));
    sqlite3_bind_text(pk_index.get(), 1, t.name.data(), static_cast<int>(t.name.size()),
                      SQLITE_TRANSIENT);
    const bool pk_index_found = pk_index.Step(&status) && sqlite3_column_int(pk_index.get(), 0) > 0;
    RETURN_IF_ERROR(status);
    if (pk_columns == 1 && integer_pk >= 0 && !pk_index_found) {
      t.columns[static_cast<size_t>(integer_pk)].rowid_alias = true;
      continue;
    }
    // Otherwise the rowid is copied as it is (the importer splits scans by rowid ranges), under a
    // name no column takes; a WITHOUT ROWID table has none.
    for (const char* alias : {"rowid", "_rowid_", "oid"}) {
      bool taken = false;
      for (const Column& c : t.columns) taken |= EqualsIgnoringCase(c.name, alias);
      if (taken) continue;
      sqlite3_stmt* probe = nullptr;
      const std::string sql =
          fmt::format("SELECT {} FROM {} LIMIT 0", alias, QuoteIdentifier(t.name));
      const bool ok = sqlite3_prepare_v2(db, sql.c_str(), -1, &probe, nullptr) == SQLITE_OK;
      sqlite3_finalize(probe);
      if (ok) t.rowid = alias;
      break;
    }
  }
  return tables;
}

// "SELECT rowid, "a", "b" FROM "t"" for the columns of `t`.
std::string SelectAll(const Table& t) {
  std::string sql = "SELECT ";
  if (!t.rowid.empty()) sql += t.rowid + ", ";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    sql += (i > 0 ? ", " : "") + QuoteIdentifier(t.columns[i].name);
  }
  if (t.columns.empty()) sql += "NULL";
  return sql + " FROM " + QuoteIdentifier(t.name);
}

int ColumnIndex(const Table& t, std::string_view name) {
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool Contains(std::string_view s, std::string_view part) {
  return LowerAscii(s).find(LowerAscii(part)) != std::string::npos;
}
bool EndsWithIgnoringCase(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         EqualsIgnoringCase(s.substr(s.size() - suffix.size()), suffix);
}

// Rows of (name, value) of a table with such columns; nothing when it has none.
StatusOr<std::vector<std::pair<std::string, std::string>>> NameValues(const SqliteDb& db,
                                                                      const char* table) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (!db.HasTable(table)) return rows;
  sqlite3_stmt* probe = nullptr;
  const std::string sql = fmt::format("SELECT name, value FROM {}", QuoteIdentifier(table));
  const bool ok = sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &probe, nullptr) == SQLITE_OK;
  sqlite3_finalize(probe);
  if (!ok) return rows;  // other columns: not the table nsys writes
  ASSIGN_OR_RETURN(SqliteStatement st, db.Prepare(sql));
  while (st.Step()) rows.emplace_back(st.Text(0), st.Text(1));
  RETURN_IF_ERROR(st.status());
  return rows;
}

}  // namespace

Status LearnNsysIdentity(const SqliteDb& db, Redactor& redactor) {
  // The capture: the environment, the user, the host, the command line.
  ASSIGN_OR_RETURN(auto capture, NameValues(db, "META_DATA_CAPTURE"));
  std::map<std::string, std::map<int64_t, std::string>> arguments;  // process -> k -> argument
  for (const auto& [name, value] : capture) {
    if (Contains(name, "ENVIRONMENT_VARIABLE")) {
      if (!redactor.AddEnvironment(value)) redactor.AddEnvironmentList(value);
    } else if (EndsWithIgnoringCase(name, "USER_NAME")) {
      redactor.AddUser(value);
    } else if (name == "DEVICE_DISPLAY_NAME" || EndsWithIgnoringCase(name, "HOSTNAME") ||
               EndsWithIgnoringCase(name, "HOST_NAME")) {
      redactor.AddHost(value);
    } else if (const size_t at = name.find(":ARGUMENT_"); at != std::string::npos) {
      char* end = nullptr;
      const long long k = std::strtoll(name.c_str() + at + 10, &end, 10);
      if (end != nullptr && *end == '\0') arguments[name.substr(0, at)][k] = value;
    }
  }
  for (const auto& [process, args] : arguments) {
    std::vector<std::string> argv;
    for (const auto& [k, arg] : args) argv.push_back(arg);
    redactor.AddCommandLine(argv);
  }
  // The system: the host name and the whole environment in one string.
  ASSIGN_OR_RETURN(auto system, NameValues(db, "TARGET_INFO_SYSTEM_ENV"));
  for (const auto& [name, value] : system) {
    if (name == "Hostname") redactor.AddHost(value);
    if (name == "DeviceEnvironment") redactor.AddEnvironmentList(value);
  }
  // The export's own record (META_DATA_EXPORT; EXPORT_META_DATA before 2024): who exported it on
  // which host.
  for (const char* table : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    ASSIGN_OR_RETURN(auto rows, NameValues(db, table));
    for (const auto& [name, value] : rows) {
      if (EndsWithIgnoringCase(name, "_HOST")) redactor.AddHost(value);
      if (EndsWithIgnoringCase(name, "_USER")) redactor.AddUser(value);
    }
  }
  // Users named by paths anywhere: every value of every column that may hold text.
  int64_t others = 0;
  ASSIGN_OR_RETURN(std::vector<Table> tables, ReadTables(db.handle(), db.path(), &others, nullptr));
  for (const Table& t : tables) {
    Table text_columns{t.name, {}, ""};
    for (const Column& c : t.columns) {
      if (c.affinity == "TEXT" || c.affinity.empty()) text_columns.columns.push_back(c);
    }
    if (text_columns.columns.empty()) continue;
    ASSIGN_OR_RETURN(SqliteStatement st, db.Prepare(SelectAll(text_columns)));
    const int n = static_cast<int>(text_columns.columns.size());
    while (st.Step()) {
      for (int i = 0; i < n; ++i) {
        if (!st.IsNull(i)) redactor.LearnPaths(st.Text(i));
      }
    }
    RETURN_IF_ERROR(st.status());
  }
  return Status::Ok();
}

Status ScanNsysDatabase(sqlite3* db, const std::string& name, const Redactor& redactor,
                        RedactCheckResult& result) {
  // Findings per place and learned string: the first row and how many more.
  std::map<std::pair<std::string, int>, std::pair<int64_t, int64_t>> found;
  auto look = [&](std::string_view text, const std::string& where, int64_t row) {
    ++result.strings;
    for (int needle : redactor.Find(text)) {
      auto [it, fresh] = found.try_emplace({where, needle}, row, 0);
      if (!fresh) ++it->second.second;
    }
  };
  int64_t others = 0;
  std::vector<std::pair<std::string, std::string>> skipped;
  ASSIGN_OR_RETURN(std::vector<Table> tables, ReadTables(db, name, &others, &skipped));
  for (const auto& [type, object] : skipped) {
    if (type == "index") continue;  // its values are its table's, scanned there
    result.findings.push_back(fmt::format(
        "the {} `{}`: redact never writes one (this copy was not made by redact, or was changed "
        "since); it is not scanned",
        type, PrintableText(object)));
  }
  {
    Status status;
    ASSIGN_OR_RETURN(Stmt schema, Stmt::Prepare(db, name, "SELECT name, sql FROM sqlite_master"));
    while (schema.Step(&status)) {
      look(schema.Text(0), "the schema (names)", 0);
      look(schema.Text(1), "the schema (CREATE statements)", 0);
    }
    RETURN_IF_ERROR(status);
    ASSIGN_OR_RETURN(Stmt free_pages, Stmt::Prepare(db, name, "PRAGMA freelist_count"));
    if (free_pages.Step(&status) && sqlite3_column_int64(free_pages.get(), 0) > 0) {
      result.findings.push_back(fmt::format(
          "{} free pages, which can hold values removed from the file: redact writes none",
          sqlite3_column_int64(free_pages.get(), 0)));
    }
    RETURN_IF_ERROR(status);
  }
  for (const Table& t : tables) {
    Table all{t.name, t.columns, ""};
    ASSIGN_OR_RETURN(Stmt st, Stmt::Prepare(db, name, SelectAll(all)));
    std::vector<std::string> where;
    for (const Column& c : t.columns) where.push_back(t.name + "." + c.name);
    Status status;
    int64_t row = 0;
    while (st.Step(&status)) {
      ++row;
      for (int i = 0; i < static_cast<int>(t.columns.size()); ++i) {
        const int type = sqlite3_column_type(st.get(), i);
        if (type == SQLITE_TEXT) look(st.Text(i), where[static_cast<size_t>(i)], row);
        if (type == SQLITE_BLOB) look(st.Blob(i), where[static_cast<size_t>(i)], row);
      }
    }
    RETURN_IF_ERROR(status);
  }
  for (const auto& [key, rows] : found) {
    const auto& [where, needle] = key;
    const auto& [first, more] = rows;
    std::string place = PrintableText(where);
    if (first > 0) place += fmt::format(", row {}", first);
    if (more > 0) place += fmt::format(" (and {} more)", more);
    result.findings.push_back(fmt::format("{}: {}", place, redactor.What(needle)));
  }
  return Status::Ok();
}

namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};

// A new empty database in one contiguous block of memory (SQLite's memdb), so that the finished
// copy is written from where it was built, without a second copy of it.
StatusOr<std::unique_ptr<sqlite3, DbCloser>> NewMemoryDatabase(const std::string& output) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, DbCloser> db(raw);
  if (rc != SQLITE_OK) return SqliteError(raw, output, rc, "creating the copy in memory");
  const int drc = sqlite3_deserialize(
      raw, "main", nullptr, 0, 0, SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
  if (drc != SQLITE_OK) return SqliteError(raw, output, drc, "creating the copy in memory");
  // memdb stops growing at 1 GiB unless told otherwise; the input limit bounds the input.
  sqlite3_int64 limit = int64_t{1} << 46;
  sqlite3_file_control(raw, "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
  for (const char* pragma : {"PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF"}) {
    if (const int prc = sqlite3_exec(raw, pragma, nullptr, nullptr, nullptr); prc != SQLITE_OK) {
      return SqliteError(raw, output, prc, pragma);
    }
  }
  return db;
}

Status Exec(sqlite3* db, const std::string& path, const std::string& sql) {
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status::Ok()
                         : SqliteError(db, path, rc, fmt::format("running `{}`", sql));
}

// What a table's rows lose beyond their strings' redaction.
struct RowRules {
  int drop_if_environment = -1;  // META_DATA_CAPTURE.name: *ENVIRONMENT_VARIABLE* rows dropped
  int device_environment_name = -1, device_environment_value = -1;  // TARGET_INFO_SYSTEM_ENV
  int output_id = -1, output_value = -1;  // StringIds: the program's output emptied
};

Status CopyTable(const SqliteDb& src, sqlite3* dst, const std::string& output, const Table& t,
                 const Redactor& redactor, const std::unordered_set<int64_t>& program_outputs,
                 RedactCounts& counts, RedactSummary& sum) {
  RowRules rules;
  if (t.name == "META_DATA_CAPTURE") rules.drop_if_environment = ColumnIndex(t, "name");
  if (t.name == "TARGET_INFO_SYSTEM_ENV") {
    rules.device_environment_name = ColumnIndex(t, "name");
    rules.device_environment_value = ColumnIndex(t, "value");
  }
  if (t.name == "StringIds") {
    rules.output_id = ColumnIndex(t, "id");
    rules.output_value = ColumnIndex(t, "value");
  }
  // The new table: names redacted like any string, types by affinity, no constraint but the
  // INTEGER PRIMARY KEY (a NOT NULL or CHECK the export's rows break would stop the copy).
  std::string create = "CREATE TABLE " + QuoteIdentifier(redactor.Redact(t.name, &counts)) + " (";
  std::string insert = "INSERT INTO " + QuoteIdentifier(redactor.Redact(t.name)) + " (";
  std::string params;
  if (!t.rowid.empty()) {
    insert += "rowid";
    params += "?";
  }
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const Column& c = t.columns[i];
    const std::string column = QuoteIdentifier(redactor.Redact(c.name, &counts));
    create += (i > 0 ? ", " : "") + column;
    if (c.rowid_alias) {
      create += " INTEGER PRIMARY KEY";
    } else if (!c.affinity.empty()) {
      create += " " + c.affinity;
    }
    insert += (params.empty() ? "" : ", ") + column;
    params += params.empty() ? "?" : ", ?";
  }
  if (t.columns.empty()) create += "\"\"";  // a table of no columns cannot be created: one empty
  RETURN_IF_ERROR(Exec(dst, output, create + ")"));
  ++sum.tables;
  if (params.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(Stmt put, Stmt::Prepare(dst, output, insert + ") VALUES (" + params + ")"));

  // Every storage class as it is (SqliteStatement reads typed values only).
  ASSIGN_OR_RETURN(Stmt rows, Stmt::Prepare(src.handle(), src.path(), SelectAll(t)));
  const int offset = t.rowid.empty() ? 0 : 1;
  const int n = offset + static_cast<int>(t.columns.size());
  Status status;
  std::string redacted;
  while (rows.Step(&status)) {
    sqlite3_stmt* r = rows.get();
    auto text_of = [&](int col) { return rows.Text(col + offset); };
    if (rules.drop_if_environment >= 0 &&
        Contains(text_of(rules.drop_if_environment), "ENVIRONMENT_VARIABLE")) {
      continue;
    }
    int empty_column = -1;  // a value written as '' whatever it was
    if (rules.device_environment_name >= 0 && rules.device_environment_value >= 0 &&
        text_of(rules.device_environment_name) == "DeviceEnvironment") {
      empty_column = rules.device_environment_value + offset;
    }
    if (rules.output_id >= 0 && rules.output_value >= 0 &&
        program_outputs.count(sqlite3_column_int64(r, rules.output_id + offset)) > 0 &&
        sqlite3_column_bytes(r, rules.output_value + offset) > 0) {
      empty_column = rules.output_value + offset;
      ++sum.program_output_values;
    }
    for (int i = 0; i < n; ++i) {
      const int p = i + 1;
      if (i == empty_column) {
        sqlite3_bind_text(put.get(), p, "", 0, SQLITE_STATIC);
        continue;
      }
      switch (sqlite3_column_type(r, i)) {
        case SQLITE_INTEGER:
          sqlite3_bind_int64(put.get(), p, sqlite3_column_int64(r, i));
          break;
        case SQLITE_FLOAT:
          sqlite3_bind_double(put.get(), p, sqlite3_column_double(r, i));
          break;
        case SQLITE_TEXT:
          redacted = redactor.Redact(rows.Text(i), &counts);
          sqlite3_bind_text64(put.get(), p, redacted.data(), redacted.size(), SQLITE_TRANSIENT,
                              SQLITE_UTF8);
          break;
        case SQLITE_BLOB:
          redacted = redactor.Redact(rows.Blob(i), &counts);
          sqlite3_bind_blob64(put.get(), p, redacted.data(), redacted.size(), SQLITE_TRANSIENT);
          break;
        default:
          sqlite3_bind_null(put.get(), p);
      }
    }
    Status put_status;
    put.Step(&put_status);
    RETURN_IF_ERROR(put_status);
    sqlite3_reset(put.get());
  }
  return status;
}

}  // namespace

Status RedactNsys(const std::string& input, const std::string& output, RedactSummary& sum) {
  ASSIGN_OR_RETURN(SqliteDb src, SqliteDb::OpenReadOnly(input));
  Redactor redactor;
  RETURN_IF_ERROR(LearnNsysIdentity(src, redactor));
  ASSIGN_OR_RETURN(std::vector<Table> tables,
                   ReadTables(src.handle(), src.path(), &sum.schema_dropped, nullptr));

  // The program's own output, captured by nsys (the strings ProcessStreams names): emptied.
  std::unordered_set<int64_t> program_outputs;
  if (src.HasTable("ProcessStreams")) {
    ASSIGN_OR_RETURN(std::vector<std::string> columns, src.Columns("ProcessStreams"));
    if (std::find(columns.begin(), columns.end(), "contentId") != columns.end()) {
      ASSIGN_OR_RETURN(SqliteStatement st, src.Prepare("SELECT contentId FROM ProcessStreams"));
      while (st.Step()) program_outputs.insert(st.Int64(0));
      RETURN_IF_ERROR(st.status());
    }
  }

  ASSIGN_OR_RETURN(auto dst, NewMemoryDatabase(output));
  RETURN_IF_ERROR(Exec(dst.get(), output, "BEGIN"));
  RedactCounts counts;
  for (const Table& t : tables) {
    RETURN_IF_ERROR(CopyTable(src, dst.get(), output, t, redactor, program_outputs, counts, sum));
  }
  RETURN_IF_ERROR(Exec(dst.get(), output, "COMMIT"));
  sum.environment_values = redactor.environment_variables() + counts.environment;
  sum.host_names = counts.host;
  sum.user_names = counts.user;
  sum.secrets = counts.secret;

  // What was learned must be nowhere in the copy; if it is, that is a bug, and nothing is written.
  RedactCheckResult check;
  RETURN_IF_ERROR(ScanNsysDatabase(dst.get(), output, redactor, check));
  if (!check.findings.empty()) {
    return InternalError(fmt::format(
        "{}: the redacted copy still holds {} (first: {}); nothing was written. This is a bug in "
        "sightline redact: please report it",
        input,
        check.findings.size() == 1 ? "one thing" : fmt::format("{} things", check.findings.size()),
        check.findings.front()));
  }
  sqlite3_int64 size = 0;
  unsigned char* bytes = sqlite3_serialize(dst.get(), "main", &size, SQLITE_SERIALIZE_NOCOPY);
  if (bytes == nullptr) {
    return InternalError(fmt::format("{}: cannot read back the copy built in memory", output));
  }
  NoteInputFile(input);
  return WriteFileAtomically(
      output, std::string_view(reinterpret_cast<const char*>(bytes), static_cast<size_t>(size)));
}

}  // namespace sightline
