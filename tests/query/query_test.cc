// The query database against the report it was built with: the kernels' sums equal the kernel
// table's, each range's projected GPU time equals the NVTX projection's and the kernels
// range_kernels lists; the bounds (writes, ATTACH, extensions, PRAGMAs, time, rows); saved
// databases reopened, and files that are not ours refused.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <string>

#include "base/file_io.h"
#include "query/query_db.h"
#include "query/query_inputs.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/status.h"

namespace sightline {
namespace {

using testing::ValueOrDie;

std::string Sample(const std::string& rel) { return std::string(SIGHTLINE_SOURCE_DIR) + "/" + rel; }
const std::string kLlama = "examples/samples/llama_decode_h100.nsys.sqlite";
const std::string kGraphNodes = "tests/data/nsys/graph_decode_node_h100.sqlite.gz";

QueryDb Build(const std::string& rel, const std::string& save = "") {
  AnalyzeOptions options;
  options.top_n = 1000;
  return ValueOrDie(OpenQueryInputs({Sample(rel)}, options, save));
}

QueryResult Q(const QueryDb& db, const std::string& sql, const QueryParams& params = {}) {
  return ValueOrDie(db.Run(sql, QueryLimits{}, params));
}

int64_t Int(const Value& v) {
  const auto* i = std::get_if<int64_t>(&v);
  EXPECT_NE(i, nullptr);
  return i ? *i : -1;
}

// name -> (instances, total_ns), from rows [name, instances, total]
std::map<std::string, std::pair<int64_t, int64_t>> ByName(const QueryResult& r) {
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  for (const auto& row : r.rows) {
    auto& e = out[std::get<std::string>(row[0])];
    e.first += Int(row[1]);
    e.second += Int(row[2]);
  }
  return out;
}

TEST(QuerySchema, KernelSumsEqualTheKernelTable) {
  const QueryDb db = Build(kLlama);
  // The report groups by full name (its table's full_name column).
  const auto from_trace =
      ByName(Q(db, "SELECT name, count(*), sum(dur_ns) FROM kernels GROUP BY name"));
  const auto from_report =
      ByName(Q(db, "SELECT full_name, instances, total_ns FROM kernel_summary__kernels"));
  ASSERT_GT(from_trace.size(), 10u);
  EXPECT_EQ(from_trace, from_report);
  const QueryResult total = Q(db, "SELECT sum(dur_ns) FROM kernels");
  const QueryResult fact =
      Q(db,
        "SELECT value FROM report_facts WHERE section = 'kernel_summary' AND key = "
        "'kernel_time_ns'");
  ASSERT_EQ(fact.rows.size(), 1u);
  EXPECT_EQ(Int(total.rows[0][0]), Int(fact.rows[0][0]));
}

// Per (name, depth), the ranges' projected GPU time equals the NVTX projection section's, and each
// range's gpu_kernels/gpu_kernel_ns equals what range_kernels lists for it (counted apart: the
// projection's sweep against a lookup per range).
void CheckRanges(const std::string& rel) {
  SCOPED_TRACE(rel);
  const QueryDb db = Build(rel);
  const auto per_group =
      ByName(Q(db,
               "SELECT name || '@' || projection_depth, gpu_kernels + gpu_memops, "
               "gpu_kernel_ns + gpu_memop_ns FROM ranges WHERE projected"));
  const QueryResult report = Q(db,
                               "SELECT name || '@' || depth, kernels + memops, gpu_time_ns FROM "
                               "nvtx_projection__ranges");
  const auto from_report = ByName(report);
  ASSERT_GT(from_report.size(), 2u);
  for (const auto& [key, value] : from_report) {
    auto it = per_group.find(key);
    ASSERT_NE(it, per_group.end()) << key;
    EXPECT_EQ(it->second, value) << key;
  }
  const QueryResult mismatched = Q(db,
                                   "SELECT r.id, r.gpu_kernels, r.gpu_kernel_ns, count(k.id), "
                                   "coalesce(sum(k.dur_ns), 0) FROM ranges r LEFT JOIN "
                                   "range_kernels rk ON rk.input = r.input AND rk.range_id = r.id "
                                   "LEFT JOIN kernels k ON k.input = rk.input AND k.id = "
                                   "rk.kernel_id WHERE r.projected GROUP BY r.id HAVING "
                                   "r.gpu_kernels != count(k.id) OR r.gpu_kernel_ns != "
                                   "coalesce(sum(k.dur_ns), 0)");
  EXPECT_EQ(mismatched.rows.size(), 0u);
  const QueryResult held = Q(db, "SELECT count(*) FROM range_kernels");
  EXPECT_GT(Int(held.rows[0][0]), 0);
}

TEST(QuerySchema, PerRangeEqualsTheNvtxProjection) { CheckRanges(kLlama); }
TEST(QuerySchema, PerRangeEqualsTheNvtxProjectionWithGraphCaptures) { CheckRanges(kGraphNodes); }

TEST(QuerySchema, GraphKernelsCarryTheirCapturePath) {
  const QueryDb db = Build(kGraphNodes);
  const QueryResult r = Q(db,
                          "SELECT count(*) FROM kernels WHERE capture_path_source = 'capture' "
                          "AND capture_path LIKE 'capture > layer_7%'");
  EXPECT_GT(Int(r.rows[0][0]), 0);
  // "How much of layer 7's time is GEMM?": the share over range_kernels is a share.
  const QueryResult share = Q(db,
                              "SELECT 100.0 * sum(CASE WHEN k.category = 'GEMM' THEN k.dur_ns "
                              "END) / sum(k.dur_ns) FROM range_kernels rk JOIN ranges r ON r.input "
                              "= rk.input AND r.id = rk.range_id JOIN kernels k ON k.input = "
                              "rk.input AND k.id = rk.kernel_id WHERE r.name = 'layer_7'");
  const double pct = std::get<double>(share.rows[0][0]);
  EXPECT_GT(pct, 0.0);
  EXPECT_LT(pct, 100.0);
}

TEST(QueryBounds, RefusesWhatDoesNotRead) {
  const QueryDb db = Build(kLlama);
  for (const char* sql :
       {"DELETE FROM kernels", "UPDATE kernels SET name = 'x'", "INSERT INTO inputs DEFAULT VALUES",
        "DROP TABLE kernels", "CREATE TABLE t (x)", "ATTACH '/tmp/sightline-attach.db' AS a",
        "SELECT load_extension('libfoo')", "PRAGMA query_only = 0", "PRAGMA writable_schema = 1",
        "BEGIN", "VACUUM INTO '/tmp/sightline-vacuum.db'"}) {
    StatusOr<QueryResult> r = db.Run(sql, QueryLimits{});
    EXPECT_FALSE(r.ok()) << sql;
    EXPECT_NE(r.status().message().find("refused"), std::string::npos)
        << sql << ": " << r.status().message();
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/sightline-attach.db"));
  EXPECT_FALSE(std::filesystem::exists("/tmp/sightline-vacuum.db"));
  StatusOr<QueryResult> two = db.Run("SELECT 1; SELECT 2", QueryLimits{});
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("one statement"), std::string::npos);
  // The PRAGMAs that describe tables are fine.
  EXPECT_TRUE(db.Run("SELECT name FROM pragma_table_info('kernels')", QueryLimits{}).ok());
}

TEST(QueryBounds, TimeAndRowLimits) {
  const QueryDb db = Build(kLlama);
  QueryLimits limits;
  limits.seconds = 0.2;
  StatusOr<QueryResult> forever = db.Run(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
      limits);
  ASSERT_FALSE(forever.ok());
  EXPECT_NE(forever.status().message().find("time limit"), std::string::npos);
  // A value too large to make: refused, not allocated.
  StatusOr<QueryResult> huge = db.Run("SELECT length(randomblob(1000000000))", QueryLimits{});
  EXPECT_FALSE(huge.ok());
  limits = QueryLimits{};
  limits.max_rows = 7;
  const QueryResult some = ValueOrDie(db.Run("SELECT id FROM kernels", limits));
  EXPECT_EQ(some.rows.size(), 7u);
  EXPECT_TRUE(some.truncated);
  limits.max_rows = 1000000;
  const QueryResult all = ValueOrDie(db.Run("SELECT id FROM kernels", limits));
  EXPECT_FALSE(all.truncated);
}

TEST(QueryErrors, NameTheMissingTableOrColumnAndListTheRightOnes) {
  const QueryDb db = Build(kLlama);
  StatusOr<QueryResult> table = db.Run("SELECT * FROM kernel", QueryLimits{});
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find("no such table: kernel"), std::string::npos);
  EXPECT_NE(table.status().message().find("kernels, api_calls"), std::string::npos)
      << table.status().message();
  StatusOr<QueryResult> column = db.Run("SELECT nme FROM kernels", QueryLimits{});
  ASSERT_FALSE(column.ok());
  EXPECT_NE(column.status().message().find("no such column: nme"), std::string::npos);
  EXPECT_NE(column.status().message().find("columns of kernels: input, id, name, short_name"),
            std::string::npos)
      << column.status().message();
  StatusOr<QueryResult> param = db.Run("SELECT :n", QueryLimits{}, {{"m", "1"}});
  ASSERT_FALSE(param.ok());
  EXPECT_NE(param.status().message().find("no parameter :m (it takes: n)"), std::string::npos)
      << param.status().message();
}

TEST(QuerySave, ASavedDatabaseReopensWithTheSameAnswersAndIsNotWritten) {
  const std::string dir = testing::MakeTempDir();
  const std::string saved = dir + "/llama.sldb";
  const QueryDb built = Build(kLlama, saved);
  ASSERT_TRUE(QueryDb::LooksLikeQueryDb(saved));
  EXPECT_FALSE(QueryDb::LooksLikeQueryDb(Sample(kLlama)));
  const std::string before = testing::Slurp(saved);
  const QueryDb reopened = ValueOrDie(OpenQueryInputs({saved}, AnalyzeOptions{}, ""));
  const std::string sql = "SELECT category, count(*), sum(dur_ns) FROM kernels GROUP BY 1";
  EXPECT_EQ(ByName(Q(built, sql)), ByName(Q(reopened, sql)));
  EXPECT_FALSE(reopened.Run("DELETE FROM kernels", QueryLimits{}).ok());
  EXPECT_EQ(testing::Slurp(saved), before);
  // No temporary is left beside it.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

// A file with our meta table but a view, another schema version or a table with a computed column
// is refused when opened, before any question runs.
TEST(QuerySave, RefusesDatabasesThatAreNotOurs) {
  const std::string dir = testing::MakeTempDir();
  const std::string good = dir + "/good.sldb";
  Build(kLlama, good);
  const std::string good_bytes = testing::Slurp(good);
  struct Case {
    const char* name;
    const char* sql;
    const char* says;
  } cases[] = {
      {"view", "CREATE VIEW v AS SELECT * FROM kernels", "v is a view"},
      {"version", "UPDATE sightline_meta SET value = '999' WHERE key = 'schema_version'",
       "schema_version is not"},
      {"generated", "CREATE TABLE g (a INTEGER, b INTEGER AS (a * 2))", "generated"},
      {"columns", "ALTER TABLE kernels ADD COLUMN extra INTEGER", "other columns"},
      {"missing", "DROP TABLE ranges", "no table ranges"},
  };
  for (const Case& c : cases) {
    const std::string path = dir + "/" + c.name + ".sldb";
    ASSERT_TRUE(WriteFileAtomically(path, good_bytes).ok());
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, c.sql, nullptr, nullptr, nullptr), SQLITE_OK) << c.sql;
    sqlite3_close(db);
    StatusOr<QueryDb> opened = QueryDb::Open(path);
    ASSERT_FALSE(opened.ok()) << c.name;
    EXPECT_NE(opened.status().message().find(c.says), std::string::npos)
        << c.name << ": " << opened.status().message();
  }
  // Not a database at all.
  const std::string junk = dir + "/junk.sldb";
  ASSERT_TRUE(WriteFileAtomically(junk, "SQLite format 3" + std::string(1, '\0') + "garbage").ok());
  EXPECT_FALSE(QueryDb::LooksLikeQueryDb(junk));
  EXPECT_FALSE(QueryDb::Open(junk).ok());
}

}  // namespace
}  // namespace sightline
