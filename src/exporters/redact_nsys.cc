#include "exporters/redact_nsys.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "base/file_io.h"
#include "base/utf8.h"
#include "exporters/sqlite_tables.h"
#include "importers/nsys/sqlite_db.h"

namespace sightline {
namespace {

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
  ASSIGN_OR_RETURN(std::vector<SqliteTable> tables,
                   ReadSqliteTables(db.handle(), db.path(), &others, nullptr));
  for (const SqliteTable& t : tables) {
    SqliteTable text_columns{t.name, {}, ""};
    for (const SqliteColumn& c : t.columns) {
      if (c.affinity == "TEXT" || c.affinity.empty()) text_columns.columns.push_back(c);
    }
    if (text_columns.columns.empty()) continue;
    ASSIGN_OR_RETURN(SqliteStatement st, db.Prepare(SelectAllColumns(text_columns)));
    const int n = static_cast<int>(text_columns.columns.size());
    while (st.Step()) {
      for (int i = 0; i < n; ++i) {
        if (st.IsNull(i)) continue;
        redactor.LearnPaths(st.Text(i));
        if (IsEnvironmentBlock(st.Text(i))) redactor.AddEnvironmentList(st.Text(i));
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
  ASSIGN_OR_RETURN(std::vector<SqliteTable> tables, ReadSqliteTables(db, name, &others, &skipped));
  for (const auto& [type, object] : skipped) {
    if (type == "index") continue;  // its values are its table's, scanned there
    result.findings.push_back(fmt::format(
        "the {} `{}`: redact never writes one (this copy was not made by redact, or was changed "
        "since); it is not scanned",
        type, PrintableText(object)));
  }
  {
    Status status;
    ASSIGN_OR_RETURN(RawStatement schema,
                     RawStatement::Prepare(db, name, "SELECT name, sql FROM sqlite_master"));
    while (schema.Step(&status)) {
      look(schema.Text(0), "the schema (names)", 0);
      look(schema.Text(1), "the schema (CREATE statements)", 0);
    }
    RETURN_IF_ERROR(status);
    ASSIGN_OR_RETURN(RawStatement free_pages,
                     RawStatement::Prepare(db, name, "PRAGMA freelist_count"));
    if (free_pages.Step(&status) && sqlite3_column_int64(free_pages.get(), 0) > 0) {
      result.findings.push_back(fmt::format(
          "{} free pages, which can hold values removed from the file: redact writes none",
          sqlite3_column_int64(free_pages.get(), 0)));
    }
    RETURN_IF_ERROR(status);
  }
  for (const SqliteTable& t : tables) {
    SqliteTable all{t.name, t.columns, ""};
    ASSIGN_OR_RETURN(RawStatement st, RawStatement::Prepare(db, name, SelectAllColumns(all)));
    std::vector<std::string> where;
    for (const SqliteColumn& c : t.columns) where.push_back(t.name + "." + c.name);
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
  // TARGET_INFO_SYSTEM_ENV: DeviceEnvironment emptied, Hostname the pseudonym whole (however
  // short: a name of two letters is too short to search for, not to keep)
  int device_environment_name = -1, device_environment_value = -1;
  int output_id = -1, output_value = -1;  // StringIds: the program's output emptied
};

Status CopyTable(const SqliteDb& src, sqlite3* dst, const std::string& output, const SqliteTable& t,
                 const Redactor& redactor, const std::unordered_set<int64_t>& program_outputs,
                 RedactCounts& counts, RedactSummary& sum) {
  RowRules rules;
  if (t.name == "META_DATA_CAPTURE") rules.drop_if_environment = SqliteColumnIndex(t, "name");
  if (t.name == "TARGET_INFO_SYSTEM_ENV") {
    rules.device_environment_name = SqliteColumnIndex(t, "name");
    rules.device_environment_value = SqliteColumnIndex(t, "value");
  }
  if (t.name == "StringIds") {
    rules.output_id = SqliteColumnIndex(t, "id");
    rules.output_value = SqliteColumnIndex(t, "value");
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
    const SqliteColumn& c = t.columns[i];
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
  ASSIGN_OR_RETURN(RawStatement put,
                   RawStatement::Prepare(dst, output, insert + ") VALUES (" + params + ")"));

  // Every storage class as it is (SqliteStatement reads typed values only).
  ASSIGN_OR_RETURN(RawStatement rows,
                   RawStatement::Prepare(src.handle(), src.path(), SelectAllColumns(t)));
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
    int host_column = -1;   // a value written as its host pseudonym
    if (rules.device_environment_name >= 0 && rules.device_environment_value >= 0 &&
        text_of(rules.device_environment_name) == "DeviceEnvironment") {
      empty_column = rules.device_environment_value + offset;
    }
    if (rules.device_environment_name >= 0 && rules.device_environment_value >= 0 &&
        text_of(rules.device_environment_name) == "Hostname") {
      const std::string_view host = text_of(rules.device_environment_value);
      if (!host.empty() && !IsPseudonym(host) && !IsGenericHost(host)) {
        host_column = rules.device_environment_value + offset;
      }
    }
    // A whole environment NUL-joined in a string (nsys 2025 keeps such blocks in StringIds).
    if (rules.output_id >= 0 && rules.output_value >= 0 &&
        IsEnvironmentBlock(text_of(rules.output_value))) {
      empty_column = rules.output_value + offset;
      ++sum.environment_values;
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
      if (i == host_column) {
        redacted = HostPseudonym(rows.Text(i));
        ++counts.host;
        sqlite3_bind_text64(put.get(), p, redacted.data(), redacted.size(), SQLITE_TRANSIENT,
                            SQLITE_UTF8);
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
  ASSIGN_OR_RETURN(std::vector<SqliteTable> tables,
                   ReadSqliteTables(src.handle(), src.path(), &sum.schema_dropped, nullptr));

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
  for (const SqliteTable& t : tables) {
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
