#include "exporters/sqlite_tables.h"

#include <fmt/format.h>

#include <cctype>

#include "exporters/needle_set.h"

namespace sightline {
namespace {

// SQLite's rules for a declared type's affinity (sqlite.org/datatype3.html, 3.1): the copy's
// columns store values as the export's did, whatever words the declaration used.
std::string AffinityOf(std::string_view declared) {
  const std::string t = LowerAscii(declared);
  auto has = [&](const char* part) { return t.find(part) != std::string::npos; };
  if (has("int")) return "INTEGER";
  if (has("char") || has("clob") || has("text")) return "TEXT";
  if (t.empty() || has("blob")) return "";
  if (has("real") || has("floa") || has("doub")) return "REAL";
  return "NUMERIC";
}

bool IsVirtualTableSql(std::string_view sql) {
  while (!sql.empty() && std::isspace(static_cast<unsigned char>(sql.front()))) {
    sql.remove_prefix(1);
  }
  return sql.size() >= 14 && EqualsIgnoringCase(sql.substr(0, 14), "CREATE VIRTUAL");
}

}  // namespace

StatusOr<RawStatement> RawStatement::Prepare(sqlite3* db, const std::string& path,
                                             const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    return SqliteError(db, path, rc, fmt::format("preparing `{}`", sql));
  }
  return RawStatement(db, path, st);
}

bool RawStatement::Step(Status* status) {
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE && status->ok()) {
    *status = SqliteError(db_, path_, rc, fmt::format("running `{}`", sqlite3_sql(st_)));
  }
  return false;
}

StatusOr<std::vector<SqliteTable>> ReadSqliteTables(
    sqlite3* db, const std::string& path, int64_t* others,
    std::vector<std::pair<std::string, std::string>>* skipped) {
  std::vector<SqliteTable> tables;
  Status status;
  {
    ASSIGN_OR_RETURN(RawStatement st,
                     RawStatement::Prepare(db, path, "SELECT type, name, sql FROM sqlite_master"));
    while (st.Step(&status)) {
      const std::string type(st.Text(0)), name(st.Text(1));
      if (type == "table" && name.rfind("sqlite_", 0) != 0 && !IsVirtualTableSql(st.Text(2))) {
        tables.push_back(SqliteTable{name, {}, ""});
      } else if (name.rfind("sqlite_", 0) != 0 && (type != "index" || !st.Text(2).empty())) {
        ++*others;  // a view, a trigger, an index, a virtual table
        if (skipped != nullptr) skipped->emplace_back(type, name);
      }
    }
    RETURN_IF_ERROR(status);
  }
  for (SqliteTable& t : tables) {
    ASSIGN_OR_RETURN(RawStatement cols, RawStatement::Prepare(db, path,
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
      t.columns.push_back(SqliteColumn{std::string(cols.Text(0)), AffinityOf(cols.Text(1)), false});
    }
    RETURN_IF_ERROR(status);
    // An INTEGER PRIMARY KEY is the rowid (lookups by id stay fast in the copy) unless the table is
    // WITHOUT ROWID, which gives its key an index of origin 'pk'.
    ASSIGN_OR_RETURN(
        RawStatement pk_index,
        RawStatement::Prepare(db, path,
                              "SELECT count(*) FROM pragma_index_list(?1) WHERE origin = 'pk'"));
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
      for (const SqliteColumn& c : t.columns) taken |= EqualsIgnoringCase(c.name, alias);
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

std::string SelectAllColumns(const SqliteTable& t) {
  std::string sql = "SELECT ";
  if (!t.rowid.empty()) sql += t.rowid + ", ";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    sql += (i > 0 ? ", " : "") + QuoteIdentifier(t.columns[i].name);
  }
  if (t.columns.empty()) sql += "NULL";
  return sql + " FROM " + QuoteIdentifier(t.name);
}

int SqliteColumnIndex(const SqliteTable& t, std::string_view name) {
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace sightline
