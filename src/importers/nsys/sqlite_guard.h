// What bounds the work a hostile database can make the nsys reader's queries do, one guard per
// SQLite connection (sqlite_db.cc installs it): a budget of virtual-machine steps (a progress
// handler), and the refusal of schema objects that are not plain tables (views, virtual tables,
// tables with generated columns), whose reads would run code the file supplies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"

struct sqlite3;

namespace sightline {

// SQLite calls the progress handler once per this many virtual-machine steps.
inline constexpr int kSqliteStepsPerTick = 1000;

struct SqliteGuard {
  std::string path;  // the input as the user named it, for messages
  int64_t budget_steps = 0;
  int64_t ticks = 0;  // progress-handler calls so far, on every statement of the connection
  bool exhausted = false;
  // Schema objects whose reads are refused, by lower-case name (SQLite matches names without
  // regard to ASCII case), and what each is ("a view").
  std::unordered_map<std::string, std::string> refused;
  std::string denied;  // the name the authorizer refused last, for the message
};

// The step budget of one connection to a database of `database_bytes`; see the .cc for why.
int64_t DefaultSqliteStepBudget(int64_t database_bytes);

// Installs `guard` (which must outlive the connection's statements) as the connection's progress
// handler and authorizer.
void InstallSqliteGuard(sqlite3* db, SqliteGuard* guard);

// Lower-cases ASCII letters, as SQLite compares identifiers.
std::string SqliteNameKey(std::string_view name);

struct RefusedTable {
  std::string name;
  std::string kind;
};
// The refused object `sql` reads: the one the authorizer denied, else the first name after FROM or
// JOIN that is refused (a view: SQLite refuses those itself, before any authorizer call).
std::optional<RefusedTable> RefusedTableIn(const SqliteGuard& guard, std::string_view sql);

// "X: table T is a view, not a table of an nsys export; export again with ...".
Status RefusedTableError(const std::string& path, const RefusedTable& table);

// The error for a query the progress handler stopped.
Status StepBudgetError(const SqliteGuard& guard, std::string_view what);

}  // namespace sightline
