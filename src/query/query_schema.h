// The schema of the query database (`sightline query`, docs/query.md): the tables of the trace
// model, the facts of the analysis and the report, one definition each, from which the builder
// creates the tables, the errors list the right names and the schema doc is checked.
// Nanoseconds are integers; every table of a trace has an `input` column (0-based, as the
// report's inputs).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sightline {

// Bumped when a table or column changes meaning or goes away; a saved database of another
// version is refused (build it again from the trace).
inline constexpr int kQuerySchemaVersion = 1;

struct QueryColumnDef {
  const char* name;
  const char* type;  // INTEGER, REAL, TEXT
  const char* doc;
};

struct QueryTableDef {
  const char* name;
  const char* doc;
  std::vector<QueryColumnDef> columns;
};

// The fixed tables, in the order of docs/query.md. Report tables (one SQL table per table of a
// report section, `SECTION__TABLE`) are added per database and listed in `report_tables`.
const std::vector<QueryTableDef>& QueryTables();
const QueryTableDef* FindQueryTable(std::string_view name);

// "CREATE TABLE name (col TYPE, ...)" for a definition.
std::string CreateTableSql(const QueryTableDef& table);
// "INSERT INTO name VALUES (?1, ..., ?N)".
std::string InsertSql(const QueryTableDef& table);

// The fixed tables as Markdown (`sightline query --schema`; docs/query.md holds it, checked by a
// test): a heading per table, its description, and a table of its columns.
std::string QuerySchemaMarkdown();

// An SQL identifier as written in a statement: "name" with inner quotes doubled.
std::string QuoteSqlName(std::string_view name);

}  // namespace sightline
