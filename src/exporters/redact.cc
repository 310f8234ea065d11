#include "exporters/redact.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cctype>
#include <memory>
#include <set>
#include <string_view>

#include "base/file_io.h"
#include "base/input_data.h"
#include "importers/inputs.h"
#include "importers/nsys/sqlite_db.h"
#include "recording/recorder_format.h"

namespace sightline {
namespace {

// "NAME=value" with an environment variable's name: upper case, digits, underscores.
size_t EnvNameLength(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (std::isupper(static_cast<unsigned char>(s[i])) ||
                          std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '_')) {
    ++i;
  }
  if (i == 0 || i >= s.size() || s[i] != '=' || std::isdigit(static_cast<unsigned char>(s[0]))) {
    return 0;
  }
  return i;
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to, bool* changed) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    *changed = true;
  }
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};

class Writable {
 public:
  Writable(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      Status s = InternalError(
          fmt::format("{}: redacting ({}) failed: {}", path_, sql, err != nullptr ? err : "?"));
      sqlite3_free(err);
      return s;
    }
    return Status::Ok();
  }
  int64_t Changes() const { return sqlite3_changes64(db_); }
  bool HasColumns(std::string_view table, std::initializer_list<std::string_view> columns) {
    for (std::string_view c : columns) {
      sqlite3_stmt* st = nullptr;
      const std::string sql = fmt::format("SELECT 1 FROM pragma_table_info({}) WHERE name = {}",
                                          Quote(table), Quote(c));
      if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return false;
      const bool found = sqlite3_step(st) == SQLITE_ROW;
      sqlite3_finalize(st);
      if (!found) return false;
    }
    return true;
  }
  // Rewrites column `column` of every row of `table` (keyed by `key`) through `fn`.
  template <typename Fn>
  Status Rewrite(std::string_view table, std::string_view key, std::string_view column, Fn&& fn) {
    // rowid is no column of table_info, and every table but WITHOUT ROWID ones has it.
    if (!HasColumns(table, {column}) || (key != "rowid" && !HasColumns(table, {key}))) {
      return Status::Ok();
    }
    std::vector<std::pair<std::string, std::string>> updates;  // key (as text), new value
    sqlite3_stmt* st = nullptr;
    const std::string sql =
        fmt::format("SELECT CAST({} AS TEXT), {} FROM {} WHERE typeof({}) = 'text'", key, column,
                    table, column);
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      return InternalError(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
      const char* k = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      const char* v = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
      if (k == nullptr || v == nullptr) continue;
      std::string value(v, static_cast<size_t>(sqlite3_column_bytes(st, 1)));
      if (fn(value)) updates.emplace_back(k, std::move(value));
    }
    sqlite3_finalize(st);
    const std::string update =
        fmt::format("UPDATE {} SET {} = ?1 WHERE CAST({} AS TEXT) = ?2", table, column, key);
    if (sqlite3_prepare_v2(db_, update.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      return InternalError(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
    }
    for (const auto& [k, v] : updates) {
      sqlite3_bind_text(st, 1, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
      sqlite3_bind_text(st, 2, k.data(), static_cast<int>(k.size()), SQLITE_STATIC);
      const int rc = sqlite3_step(st);
      sqlite3_reset(st);
      if (rc != SQLITE_DONE)
        return InternalError(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
    }
    sqlite3_finalize(st);
    return Status::Ok();
  }
  static std::string Quote(std::string_view s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }

 private:
  sqlite3* db_;
  std::string path_;
};

StatusOr<std::string> RedactNsys(const std::string& input, RedactSummary& sum) {
  ASSIGN_OR_RETURN(SqliteDb src, SqliteDb::OpenReadOnly(input));
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    sqlite3_close_v2(raw);
    return InternalError("cannot open an in-memory database for the copy");
  }
  std::unique_ptr<sqlite3, DbCloser> dst(raw);
  sqlite3_backup* backup = sqlite3_backup_init(dst.get(), "main", src.handle(), "main");
  if (backup == nullptr) return src.ErrorFor(sqlite3_errcode(dst.get()), "copying the export");
  const int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) return src.ErrorFor(rc, "copying the export");

  Writable db(dst.get(), input);
  // What is removed must not stay behind in free pages.
  RETURN_IF_ERROR(db.Exec("PRAGMA secure_delete = ON"));

  // The host name, from the system table (what the ranks analysis reads) or the capture's.
  std::string host;
  auto read_host = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    if (!host.empty() || sqlite3_prepare_v2(dst.get(), sql, -1, &st, nullptr) != SQLITE_OK) return;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr) {
      host = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
  };
  if (db.HasColumns("TARGET_INFO_SYSTEM_ENV", {"name", "value"})) {
    read_host("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1");
  }
  if (db.HasColumns("META_DATA_CAPTURE", {"name", "value"})) {
    read_host("SELECT value FROM META_DATA_CAPTURE WHERE name = 'DEVICE_DISPLAY_NAME' LIMIT 1");
  }
  const std::string pseudonym = host.empty() ? "" : HostPseudonym(host);

  // The program's own output, captured by nsys: emptied.
  if (db.HasColumns("ProcessStreams", {"contentId"}) &&
      db.HasColumns("StringIds", {"id", "value"})) {
    RETURN_IF_ERROR(db.Exec(
        "UPDATE StringIds SET value = '' WHERE value <> '' AND id IN (SELECT contentId FROM "
        "ProcessStreams)"));
    sum.program_output_values += db.Changes();
  }

  if (db.HasColumns("META_DATA_CAPTURE", {"name", "value"})) {
    RETURN_IF_ERROR(
        db.Exec("DELETE FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE%'"));
    sum.environment_values += db.Changes();
    RETURN_IF_ERROR(db.Exec(
        "UPDATE META_DATA_CAPTURE SET value = '' WHERE name LIKE '%USER_NAME' AND value <> ''"));
    sum.user_paths += db.Changes();
  }
  // Every other text of the capture and system tables, and every string: variables lose their
  // value, the host its name, paths their user.
  auto redact_text = [&](std::string& value) {
    bool changed = false;
    if (const size_t n = EnvNameLength(value); n > 0 && value.size() > n + 1) {
      value.resize(n + 1);
      ++sum.environment_values;
      changed = true;
    }
    if (!host.empty() && value == host) {
      value = pseudonym;
      ++sum.host_names;
      return true;
    }
    bool host_changed = false;
    if (host.size() >= 4) ReplaceAll(value, host, pseudonym, &host_changed);
    sum.host_names += host_changed;
    bool user = false;
    value = RedactUserPaths(value, &user);
    sum.user_paths += user;
    return changed || host_changed || user;
  };
  if (db.HasColumns("TARGET_INFO_SYSTEM_ENV", {"name", "value"})) {
    // DeviceEnvironment holds the whole environment, "NAME=value;NAME=value;...": emptied.
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(dst.get(),
                           "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = "
                           "'DeviceEnvironment' AND typeof(value) = 'text'",
                           -1, &st, nullptr) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        const std::string_view list(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                                    static_cast<size_t>(sqlite3_column_bytes(st, 0)));
        for (size_t start = 0; start < list.size();) {
          const size_t end = list.find(';', start);
          sum.environment_values += EnvNameLength(list.substr(start, end - start)) > 0;
          if (end == std::string_view::npos) break;
          start = end + 1;
        }
      }
    }
    sqlite3_finalize(st);
    RETURN_IF_ERROR(
        db.Exec("UPDATE TARGET_INFO_SYSTEM_ENV SET value = '' WHERE name = 'DeviceEnvironment'"));
    RETURN_IF_ERROR(db.Rewrite("TARGET_INFO_SYSTEM_ENV", "rowid", "value", redact_text));
  }
  RETURN_IF_ERROR(db.Rewrite("META_DATA_CAPTURE", "rowid", "value", redact_text));
  // The export's own record (META_DATA_EXPORT; EXPORT_META_DATA before 2024): who exported it on
  // which host, and the absolute paths of the report.
  for (const char* table : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    if (!db.HasColumns(table, {"name", "value"})) continue;
    RETURN_IF_ERROR(db.Exec(fmt::format(
        "UPDATE {} SET value = '' WHERE name LIKE '%\\_USER' ESCAPE '\\' AND value <> ''", table)));
    sum.user_paths += db.Changes();
    std::vector<std::pair<int64_t, std::string>> hosts;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(dst.get(),
                           fmt::format("SELECT rowid, value FROM {} WHERE name LIKE '%\\_HOST' "
                                       "ESCAPE '\\' AND typeof(value) = 'text' AND value <> ''",
                                       table)
                               .c_str(),
                           -1, &st, nullptr) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        hosts.emplace_back(sqlite3_column_int64(st, 0),
                           reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
      }
    }
    sqlite3_finalize(st);
    for (const auto& [row, name] : hosts) {
      RETURN_IF_ERROR(db.Exec(fmt::format("UPDATE {} SET value = {} WHERE rowid = {}", table,
                                          Writable::Quote(HostPseudonym(name)), row)));
      ++sum.host_names;
    }
    RETURN_IF_ERROR(db.Rewrite(table, "rowid", "value", redact_text));
  }
  RETURN_IF_ERROR(db.Rewrite("StringIds", "id", "value", redact_text));
  RETURN_IF_ERROR(db.Exec("VACUUM"));

  sqlite3_int64 size = 0;
  unsigned char* bytes = sqlite3_serialize(dst.get(), "main", &size, 0);
  if (bytes == nullptr) return InternalError(fmt::format("{}: cannot serialize the copy", input));
  std::string out(reinterpret_cast<const char*>(bytes), static_cast<size_t>(size));
  sqlite3_free(bytes);
  return out;
}

StatusOr<std::string> RedactRecording(const std::string& input, RedactSummary& sum) {
  ASSIGN_OR_RETURN(std::string file, ReadInput(input));
  // First pass: which strings name the executable and the host.
  std::set<uint32_t> executable, hostname;
  recfmt::ReadSummary summary;
  std::string error =
      recfmt::ReadRecords(file, &summary, [&](recfmt::RecordType type, std::string_view body) {
        if (type != recfmt::RecordType::kProcess) return;
        const recfmt::ProcessBody p = recfmt::DecodeBody<recfmt::ProcessBody>(body);
        if (p.executable_string != recfmt::kNoString) executable.insert(p.executable_string);
        if (p.hostname_string != recfmt::kNoString) hostname.insert(p.hostname_string);
      });
  if (!error.empty()) return InvalidInputError(fmt::format("{}: {}", input, error));
  if (summary.bad_chunks > 0 || summary.malformed_records > 0) {
    return InvalidInputError(fmt::format(
        "{}: the recording is damaged ({} bytes unread); redact copies whole recordings only, "
        "so that the copy's report equals the original's",
        input, summary.unread_bytes));
  }
  // Second pass: every record again, those strings rewritten.
  std::string out = recfmt::FileHeaderBytes();
  recfmt::ChunkBuilder chunk;
  error = recfmt::ReadRecords(file, &summary, [&](recfmt::RecordType type, std::string_view body) {
    uint32_t id = 0;
    std::string_view text;
    if (type == recfmt::RecordType::kString && recfmt::DecodeString(body, &id, &text) &&
        (executable.count(id) > 0 || hostname.count(id) > 0)) {
      std::string value(text);
      if (hostname.count(id) > 0) {
        value = HostPseudonym(value);
        ++sum.host_names;
      } else {
        bool changed = false;
        value = RedactUserPaths(value, &changed);
        sum.user_paths += changed;
      }
      chunk.AddString(id, value);
    } else {
      chunk.AddRaw(type, body.data(), body.size());
    }
    if (chunk.payload_bytes() >= (4u << 20)) out += chunk.Finish();
  });
  if (!error.empty()) return InvalidInputError(fmt::format("{}: {}", input, error));
  if (!chunk.empty()) out += chunk.Finish();
  return out;
}

}  // namespace

std::string HostPseudonym(const std::string& host) {
  uint64_t h = 14695981039346656037ull;
  for (char c : host) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return fmt::format("host-{:08x}", static_cast<uint32_t>(h));
}

std::string RedactUserPaths(const std::string& text, bool* changed) {
  std::string out = text;
  for (std::string_view root : {"/home/", "/Users/"}) {
    for (size_t at = out.find(root); at != std::string::npos; at = out.find(root, at + 1)) {
      const size_t name = at + root.size();
      size_t end = name;
      while (end < out.size() && out[end] != '/' && out[end] != '"' && out[end] != '\'' &&
             out[end] != ' ' && out[end] != ':' && out[end] != ';' && out[end] != '\n') {
        ++end;
      }
      if (end == name || out.compare(name, end - name, "user") == 0) continue;
      out.replace(name, end - name, "user");
      *changed = true;
    }
  }
  return out;
}

StatusOr<RedactSummary> RedactFile(const std::string& input, const std::string& output) {
  ASSIGN_OR_RETURN(RecognisedInput in, RecogniseInput(input));
  RedactSummary sum;
  sum.format = in.reader->name;
  std::string bytes;
  if (sum.format == "nsys-sqlite") {
    ASSIGN_OR_RETURN(bytes, RedactNsys(input, sum));
  } else if (sum.format == "sightline-recorder") {
    ASSIGN_OR_RETURN(bytes, RedactRecording(input, sum));
  } else {
    return InvalidArgumentError(fmt::format(
        "{}: a {} ({}); redact copies Nsight Systems SQLite exports and Sightline recordings, "
        "the inputs that carry the capturing machine's environment",
        input, InputKindName(in.reader->kind), in.reader->description));
  }
  NoteInputFile(input);
  RETURN_IF_ERROR(WriteFileAtomically(output, bytes));
  return sum;
}

}  // namespace sightline
