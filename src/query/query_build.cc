#include "query/query_build.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <set>

#include "query/query_insert.h"
#include "query/query_schema.h"
#include "report/report_schema.h"

namespace sightline {
namespace {

std::string UnitName(Unit unit) {
  const auto names = EnumNames<Unit>::Names();
  const auto i = static_cast<size_t>(unit);
  return i < names.size() ? std::string(names[i]) : "text";
}

// A report table's SQL name: SECTION__TABLE, lower-case letters, digits and '_' only.
std::string SqlTableName(std::string_view section, std::string_view table) {
  std::string out;
  for (char c : fmt::format("{}__{}", section, table)) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out += (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c : '_';
  }
  return out;
}

}  // namespace

Status QueryDbBuilder::Error(int rc, std::string_view what) const {
  return OutputError(fmt::format("{}: writing the query database failed while {}: {}", path_, what,
                                 db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc)));
}

StatusOr<std::unique_ptr<QueryDbBuilder>> QueryDbBuilder::Create(const std::string& path) {
  std::unique_ptr<QueryDbBuilder> b(new QueryDbBuilder(path));
  const int rc =
      sqlite3_open_v2(path.c_str(), &b->db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return b->Error(rc, "creating it");
  sqlite3_db_config(b->db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  // A new file written once: no journal (a failed build is removed whole), a bounded page cache
  // (4 MiB) so that a large trace's rows go to the file, not to memory, and 16 KiB pages (fewer
  // pages to write and to read back for the indexes: 13% less CPU than 4 KiB on 10^6 kernels,
  // the same peak memory with a 4 MiB cache where a 16 MiB one added 15 MB; docs/PERFORMANCE.md).
  for (const char* pragma : {"PRAGMA page_size = 16384", "PRAGMA journal_mode = OFF",
                             "PRAGMA synchronous = OFF", "PRAGMA cache_size = -4096",
                             "PRAGMA temp_store = FILE", "PRAGMA locking_mode = EXCLUSIVE"}) {
    const int prc = sqlite3_exec(b->db_, pragma, nullptr, nullptr, nullptr);
    if (prc != SQLITE_OK) return b->Error(prc, pragma);
  }
  for (const QueryTableDef& t : QueryTables()) {
    const int crc = sqlite3_exec(b->db_, CreateTableSql(t).c_str(), nullptr, nullptr, nullptr);
    if (crc != SQLITE_OK) return b->Error(crc, fmt::format("creating table {}", t.name));
  }
  const int brc = sqlite3_exec(b->db_, "BEGIN", nullptr, nullptr, nullptr);
  if (brc != SQLITE_OK) return b->Error(brc, "starting the transaction");
  ASSIGN_OR_RETURN(b->feed_, QueryRowFeed::Register(b->db_));
  return b;
}

QueryDbBuilder::~QueryDbBuilder() {
  feed_.reset();
  sqlite3_close_v2(db_);
}

Status QueryDbBuilder::AddReport(const Report& report) {
  {
    QueryInsert ins(db_, InsertSql(*FindQueryTable("inputs")));
    for (size_t i = 0; i < report.inputs.size(); ++i) {
      const ReportInput& in = report.inputs[i];
      ins.Int(static_cast<int64_t>(i)).Text(in.label).Text(in.path).Text(in.format);
      ins.Text(in.format_version).Text(in.producer).IntOr(in.rank, -1).Row();
    }
    RETURN_IF_ERROR(ins.status());
  }
  QueryInsert facts(db_, InsertSql(*FindQueryTable("report_facts")));
  QueryInsert tables(db_, InsertSql(*FindQueryTable("report_tables")));
  QueryInsert columns(db_, InsertSql(*FindQueryTable("report_columns")));
  // Per SQL table made so far: its columns (keys), to add the ones a later input brings.
  std::vector<std::pair<std::string, std::set<std::string>>> made;
  for (const Section& s : report.sections) {
    for (const Fact& f : s.facts) {
      facts.IntOr(s.input, -1).Text(s.key).Text(f.key).Text(f.label).Val(f.value);
      facts.Text(UnitName(f.unit)).Row();
    }
    for (const Table& t : s.tables) {
      const std::string name = SqlTableName(s.key, t.key);
      // Column names: the keys, made distinct from each other and from input and row.
      std::vector<std::string> keys;
      std::set<std::string> seen = {"input", "row"};
      for (const Column& c : t.columns) {
        std::string k = c.key.empty() ? "column" : c.key;
        while (seen.contains(k)) k += "_";
        seen.insert(k);
        keys.push_back(k);
      }
      auto it =
          std::find_if(made.begin(), made.end(), [&](const auto& m) { return m.first == name; });
      if (it == made.end()) {
        const int rc = sqlite3_exec(
            db_,
            fmt::format("CREATE TABLE {} (input INTEGER, row INTEGER)", QuoteSqlName(name)).c_str(),
            nullptr, nullptr, nullptr);
        if (rc != SQLITE_OK) return Error(rc, fmt::format("creating table {}", name));
        made.push_back({name, {}});
        it = made.end() - 1;
      }
      for (size_t c = 0; c < keys.size(); ++c) {
        if (it->second.contains(keys[c])) continue;
        const int rc = sqlite3_exec(
            db_,
            fmt::format("ALTER TABLE {} ADD COLUMN {}", QuoteSqlName(name), QuoteSqlName(keys[c]))
                .c_str(),
            nullptr, nullptr, nullptr);
        if (rc != SQLITE_OK) return Error(rc, fmt::format("adding column {} to {}", keys[c], name));
        it->second.insert(keys[c]);
        columns.Text(name).Text(keys[c]).Text(t.columns[c].title).Text(UnitName(t.columns[c].unit));
        columns.Row();
      }
      std::string sql = fmt::format("INSERT INTO {} (input, row", QuoteSqlName(name));
      for (const std::string& k : keys) sql += ", " + QuoteSqlName(k);
      sql += ") VALUES (?1, ?2";
      for (size_t c = 0; c < keys.size(); ++c) sql += fmt::format(", ?{}", c + 3);
      sql += ")";
      QueryInsert rows(db_, sql);
      for (size_t r = 0; r < t.rows.size(); ++r) {
        rows.IntOr(s.input, -1).Int(static_cast<int64_t>(r));
        for (size_t c = 0; c < keys.size(); ++c) {
          if (c < t.rows[r].size()) {
            rows.Val(t.rows[r][c]);
          } else {
            rows.Null();
          }
        }
        rows.Row();
      }
      RETURN_IF_ERROR(rows.status());
      tables.IntOr(s.input, -1).Text(s.key).Text(t.key).Text(name).Text(t.title);
      tables.Int(static_cast<int64_t>(t.rows.size())).IntOr(t.total_rows, -1).Row();
    }
  }
  RETURN_IF_ERROR(facts.status());
  RETURN_IF_ERROR(tables.status());
  RETURN_IF_ERROR(columns.status());
  QueryInsert findings(db_, InsertSql(*FindQueryTable("findings")));
  QueryInsert evidence(db_, InsertSql(*FindQueryTable("finding_evidence")));
  for (size_t i = 0; i < report.findings.size(); ++i) {
    const Finding& f = report.findings[i];
    const auto rank = static_cast<int64_t>(i);
    findings.IntOr(f.input, -1).Int(rank).Text(f.id).Text(SeverityName(f.severity)).Text(f.title);
    findings.Text(f.where).Text(f.recommendation).Int(f.estimated_savings_ns).Row();
    for (const Fact& e : f.evidence) evidence.Int(rank).Text(e.key).Val(e.value).Row();
  }
  RETURN_IF_ERROR(findings.status());
  return evidence.status();
}

Status QueryDbBuilder::Finish(const std::vector<std::string>& built_from) {
  std::string left_out;
  for (const char* table : {"kernels", "api_calls", "memops", "ranges", "range_kernels",
                            "iterations", "gpu_metrics", "memory_events"}) {
    if (!Fills(table)) left_out += fmt::format("{}{}", left_out.empty() ? "" : ",", table);
  }
  {
    QueryInsert meta(db_, InsertSql(*FindQueryTable("sightline_meta")));
    meta.Text("schema_version").Text(std::to_string(kQuerySchemaVersion)).Row();
    meta.Text("tool_version").Text(SIGHTLINE_VERSION).Row();
    std::string from;
    for (const std::string& p : built_from) from += from.empty() ? p : "\n" + p;
    meta.Text("built_from").Text(from).Row();
    meta.Text("left_out").Text(left_out).Row();
    RETURN_IF_ERROR(meta.status());
  }
  // After the rows: an index built from a full table is faster than one kept up row by row.
  static constexpr std::pair<const char*, const char*> kIndexes[] = {
      {"kernels", "CREATE INDEX kernels_by_time ON kernels (input, start_ns)"},
      {"kernels", "CREATE INDEX kernels_by_id ON kernels (input, id)"},
      {"api_calls", "CREATE INDEX api_calls_by_id ON api_calls (input, id)"},
      {"api_calls", "CREATE INDEX api_calls_by_time ON api_calls (input, start_ns)"},
      {"ranges", "CREATE INDEX ranges_by_id ON ranges (input, id)"},
      {"range_kernels", "CREATE INDEX range_kernels_by_range ON range_kernels (input, range_id)"},
      {"range_kernels",
       "CREATE INDEX range_kernels_by_kernel ON range_kernels (input, kernel_id)"}};
  for (const auto& [table, index] : kIndexes) {
    if (!Fills(table)) continue;
    const int rc = sqlite3_exec(db_, index, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return Error(rc, index);
  }
  int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Error(rc, "committing");
  feed_.reset();
  rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) return Error(rc, "closing");
  db_ = nullptr;
  return Status::Ok();
}

}  // namespace sightline
