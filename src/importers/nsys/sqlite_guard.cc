#include "importers/nsys/sqlite_guard.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <limits>

namespace sightline {
namespace {

// The budget is counted in virtual-machine steps, not seconds: the same file stops at the same
// point on every machine, under a sanitizer and on a loaded one, so a real export cannot fail on a
// slow day. It grows with the database's size because every query the reader runs is linear in
// the rows it reads (scans, lookups by rowid or index, sorts whose comparisons happen inside one
// step), and each table is read a few times at most. Measured (docs/reliability.md, "SQLite
// files"): a whole import takes at most 0.32 steps per byte on any one connection, on the shipped
// and shared real exports and on a generated 116 MB one; an export of 6 million rows of 19 bytes
// each, every value 0 or 1, takes 1.3; rows with no stored values at all would take about 5. The
// budget is 100 steps per byte, 20 times that worst case and 300 times a real export, with a floor
// of 10^8 (about a second) for small files. (At 60 to 200 million steps a second, a 1 GB file
// would be given up after 10 to 30 minutes.) What it stops is work that grows faster than the
// file: a join or a per-row lookup that the file's schema or statistics (sqlite_stat1) turn into
// a nested loop, a recursive query.
constexpr int64_t kStepsPerByte = 100;
constexpr int64_t kMinSteps = 100'000'000;

int ProgressHandler(void* context) {
  auto* guard = static_cast<SqliteGuard*>(context);
  if (++guard->ticks <= guard->budget_steps / kSqliteStepsPerTick) return 0;
  guard->exhausted = true;
  return 1;  // SQLite stops the statement with SQLITE_INTERRUPT
}

// Refuses, when a statement is prepared, every read of an object that is not a plain table: its
// rows would be computed by code the file supplies. (Views never get this far: the connection has
// them disabled, and SQLite refuses a statement that names one before asking the authorizer.)
int Authorizer(void* context, int action, const char* table, const char* /*column*/,
               const char* /*schema*/, const char* /*trigger_or_view*/) {
  auto* guard = static_cast<SqliteGuard*>(context);
  if (action != SQLITE_READ || table == nullptr) return SQLITE_OK;
  if (!guard->refused.contains(SqliteNameKey(table))) return SQLITE_OK;
  guard->denied = table;
  return SQLITE_DENY;
}

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

// The identifier at sql[*pos] (bare, or quoted with "", [] or ``), unquoted; *pos moves past it.
std::string ReadIdentifier(std::string_view sql, size_t* pos) {
  size_t i = *pos;
  std::string name;
  if (i < sql.size() && (sql[i] == '"' || sql[i] == '`' || sql[i] == '[')) {
    const char close = sql[i] == '[' ? ']' : sql[i];
    for (++i; i < sql.size(); ++i) {
      if (sql[i] == close) {
        if (close != ']' && i + 1 < sql.size() && sql[i + 1] == close) {
          name.push_back(close);  // a doubled quote
          ++i;
          continue;
        }
        ++i;
        break;
      }
      name.push_back(sql[i]);
    }
  } else {
    while (i < sql.size() && IsIdentifierChar(sql[i])) name.push_back(sql[i++]);
  }
  *pos = i;
  return name;
}

}  // namespace

int64_t DefaultSqliteStepBudget(int64_t database_bytes) {
  const int64_t bytes = std::max<int64_t>(database_bytes, 0);
  if (bytes > std::numeric_limits<int64_t>::max() / kStepsPerByte) {
    return std::numeric_limits<int64_t>::max();
  }
  return std::max(kMinSteps, bytes * kStepsPerByte);
}

void InstallSqliteGuard(sqlite3* db, SqliteGuard* guard) {
  sqlite3_progress_handler(db, kSqliteStepsPerTick, ProgressHandler, guard);
  sqlite3_set_authorizer(db, Authorizer, guard);
}

std::string SqliteNameKey(std::string_view name) {
  std::string key(name);
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return key;
}

std::optional<RefusedTable> RefusedTableIn(const SqliteGuard& guard, std::string_view sql) {
  if (guard.refused.empty()) return std::nullopt;
  if (!guard.denied.empty()) {
    auto it = guard.refused.find(SqliteNameKey(guard.denied));
    if (it != guard.refused.end()) return RefusedTable{guard.denied, it->second};
  }
  // Our own SQL names its tables after FROM or JOIN, one word each ("FROM t", "JOIN \"t\" s").
  bool after_from = false;
  for (size_t i = 0; i < sql.size();) {
    if (!IsIdentifierChar(sql[i]) && sql[i] != '"' && sql[i] != '`' && sql[i] != '[') {
      ++i;
      continue;
    }
    const bool quoted = !IsIdentifierChar(sql[i]);
    const std::string word = ReadIdentifier(sql, &i);
    const std::string key = SqliteNameKey(word);
    if (after_from) {
      auto it = guard.refused.find(key);
      if (it != guard.refused.end()) return RefusedTable{word, it->second};
    }
    after_from = !quoted && (key == "from" || key == "join");
  }
  return std::nullopt;
}

Status RefusedTableError(const std::string& path, const RefusedTable& table) {
  return InvalidInputError(
      fmt::format("{}: table {} is {}, not a table of an nsys export; export again with "
                  "`nsys export --type sqlite`",
                  path, table.name, table.kind));
}

Status StepBudgetError(const SqliteGuard& guard, std::string_view what) {
  return InvalidInputError(fmt::format(
      "{}: gave up while {}: the query ran past {} SQLite steps, far more than reading a real "
      "nsys export of this size takes ({} per byte of the database). The file's schema or "
      "statistics make the query run without end; export the .nsys-rep again with "
      "`nsys export --type sqlite`",
      guard.path, what, guard.budget_steps, kStepsPerByte));
}

}  // namespace sightline
