// How the query database is built: the row feed (one INSERT ... SELECT per large table), the
// tables a question reads, and a temporary built for one question answering as the full
// database does.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "pipeline/pipeline.h"
#include "query/named_queries.h"
#include "query/query_db.h"
#include "query/query_inputs.h"
#include "query/query_rows.h"
#include "query/query_schema.h"
#include "testing/status.h"

namespace sightline {
namespace {

using testing::ValueOrDie;

const std::string kLlama =
    std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/llama_decode_h100.nsys.sqlite";

using Tables = std::set<std::string>;

TEST(QueryTablesRead, AreTheFixedTablesAStatementReads) {
  EXPECT_EQ(TablesReadBy("SELECT count(*) FROM kernels"), Tables{"kernels"});
  EXPECT_EQ(TablesReadBy("SELECT k.name FROM range_kernels rk JOIN kernels k ON k.id = "
                         "rk.kernel_id WHERE rk.input = :input"),
            (Tables{"kernels", "range_kernels"}));
  EXPECT_EQ(TablesReadBy("WITH w AS (SELECT start_ns FROM iterations) SELECT (SELECT count(*) "
                         "FROM memops), exists(SELECT 1 FROM api_calls) FROM w"),
            (Tables{"api_calls", "iterations", "memops"}));
  // Tables of the report and the schema's own count, pragma functions read none of the trace's.
  EXPECT_EQ(TablesReadBy("SELECT * FROM findings JOIN report_facts USING (input)"),
            (Tables{"findings", "report_facts"}));
  EXPECT_EQ(TablesReadBy("SELECT name FROM pragma_table_info('kernels')"), Tables{});
  // What does not prepare on the fixed schema: the full database answers or says what is wrong.
  EXPECT_EQ(TablesReadBy("SELECT * FROM kernel_summary__kernels"), std::nullopt);
  EXPECT_EQ(TablesReadBy("SELEKT 1"), std::nullopt);
  EXPECT_EQ(TablesReadBy("SELECT nme FROM kernels"), std::nullopt);
  EXPECT_EQ(TablesReadBy(""), std::nullopt);
}

QueryResult Q(const QueryDb& db, const std::string& sql) {
  return ValueOrDie(db.Run(sql, QueryLimits{60, 100000}));
}

// Each saved question and a few plain ones answer the same on a temporary built for them alone
// as on the full database; the trace tables they do not read are empty and named as left out.
TEST(QueryForOneQuestion, AnswersAsTheFullDatabase) {
  AnalyzeOptions options;
  options.top_n = 1000;
  const QueryDb full = ValueOrDie(OpenQueryInputs({kLlama}, options, ""));
  std::vector<std::string> questions = {
      "SELECT count(*), sum(dur_ns), sum(length(name)), count(capture_path) FROM kernels",
      "SELECT name, count(*), sum(dur_ns) FROM api_calls GROUP BY name ORDER BY 1",
      "SELECT count(*), sum(gpu_kernel_ns) FROM ranges",
      "SELECT section, key, value FROM report_facts ORDER BY rowid"};
  for (const NamedQuery& q : NamedQueries()) questions.emplace_back(q.sql);
  for (const std::string& sql : questions) {
    SCOPED_TRACE(sql);
    const QueryDb one = ValueOrDie(OpenQueryInputs({kLlama}, options, "", sql));
    const QueryResult a = Q(full, sql), b = Q(one, sql);
    EXPECT_EQ(a.columns, b.columns);
    EXPECT_EQ(a.rows, b.rows);
  }
  const std::string kernels_only = "SELECT count(*) FROM kernels";
  const QueryDb one = ValueOrDie(OpenQueryInputs({kLlama}, options, "", kernels_only));
  EXPECT_GT(std::get<int64_t>(Q(one, kernels_only).rows[0][0]), 1000);
  EXPECT_EQ(std::get<int64_t>(Q(one, "SELECT count(*) FROM api_calls").rows[0][0]), 0);
  EXPECT_GT(std::get<int64_t>(Q(full, "SELECT count(*) FROM api_calls").rows[0][0]), 1000);
  const QueryResult left = Q(one, "SELECT value FROM sightline_meta WHERE key = 'left_out'");
  ASSERT_EQ(left.rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(left.rows[0][0]),
            "api_calls,memops,ranges,range_kernels,iterations,gpu_metrics,memory_events");
  const QueryResult none = Q(full, "SELECT value FROM sightline_meta WHERE key = 'left_out'");
  ASSERT_EQ(none.rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(none.rows[0][0]), "");
}

// With serving results as an input: the requests and the steps they waited in, on a temporary
// built for that question alone, as on the full database.
TEST(QueryForOneQuestion, SlowTtftRequestsAsTheFullDatabase) {
  const std::vector<std::string> inputs = {
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/serving_loop_h100.slrec",
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/serving_loop_h100.requests.jsonl"};
  const std::string sql = FindNamedQuery("slow_ttft_requests")->sql;
  const QueryDb full = ValueOrDie(OpenQueryInputs(inputs, AnalyzeOptions{}, ""));
  const QueryDb one = ValueOrDie(OpenQueryInputs(inputs, AnalyzeOptions{}, "", sql));
  const QueryParams slo = {{"slo_ms", "5"}};
  const QueryResult a = ValueOrDie(full.Run(sql, QueryLimits{}, slo));
  const QueryResult b = ValueOrDie(one.Run(sql, QueryLimits{}, slo));
  ASSERT_GT(a.rows.size(), 0u);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(std::get<int64_t>(Q(one, "SELECT count(*) FROM kernels").rows[0][0]), 0);
}

// Several traces are the ranks of one job, as in `analyze`: the multi-trace sections (input NULL)
// hold the facts AnalyzeFiles's report holds, and their findings are there.
TEST(QueryRanks, TheMultiTraceSectionsAreThoseOfAnalyze) {
  const std::vector<std::string> inputs = {
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/basic.json",
      std::string(SIGHTLINE_SOURCE_DIR) +
          "/tests/data/kineto/pytorch1.10_hta_inference_rank1.json.gz"};
  AnalyzeOptions options;
  options.top_n = 1000;
  const Report report = ValueOrDie(AnalyzeFiles(inputs, options));
  std::map<std::string, Value> want;
  for (const Section& s : report.sections) {
    if (s.input >= 0) continue;
    for (const Fact& f : s.facts) want[s.key + "." + f.key] = f.value;
  }
  ASSERT_TRUE(want.contains("ranks.ranks"));
  const QueryDb db = ValueOrDie(OpenQueryInputs(inputs, options, ""));
  std::map<std::string, Value> got;
  for (const auto& row :
       Q(db, "SELECT section || '.' || key, value FROM report_facts WHERE input IS NULL").rows) {
    got[std::get<std::string>(row[0])] = row[1];
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(std::get<int64_t>(got["ranks.ranks"]), 2);
  // The findings, those of the set's rules included, as the report ranks them.
  const QueryResult findings = Q(db, "SELECT id FROM findings ORDER BY rank");
  ASSERT_EQ(findings.rows.size(), report.findings.size());
  for (size_t i = 0; i < report.findings.size(); ++i) {
    EXPECT_EQ(std::get<std::string>(findings.rows[i][0]), report.findings[i].id);
  }
}

// The row feed inserts what the source gives, in one statement, and stops on a row that does not
// fit the table, naming it.
TEST(QueryRowFeed, InsertsTheRowsAndRefusesARowOfTheWrongWidth) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &raw), SQLITE_OK);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
  const QueryTableDef& processes = *FindQueryTable("processes");
  ASSERT_EQ(sqlite3_exec(raw, CreateTableSql(processes).c_str(), nullptr, nullptr, nullptr),
            SQLITE_OK);
  std::unique_ptr<QueryRowFeed> feed = ValueOrDie(QueryRowFeed::Register(raw));
  const std::string names[] = {"python", "worker 'a'", ""};
  ASSERT_TRUE(
      feed->Insert(processes, RowsOf(3,
                                     [&](size_t i, QueryRow& row) {
                                       row.Int(7).Int(static_cast<int64_t>(100 + i)).Text(names[i]);
                                     }))
          .ok());
  ASSERT_TRUE(feed->Insert(processes, RowsOf(0, [](size_t, QueryRow&) {})).ok());
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT input, pid, name FROM processes ORDER BY rowid", -1,
                               &st, nullptr),
            SQLITE_OK);
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    EXPECT_EQ(sqlite3_column_int64(st, 0), 7);
    EXPECT_EQ(sqlite3_column_int64(st, 1), 100 + n);
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 2)), names[n]);
    ++n;
  }
  sqlite3_finalize(st);
  EXPECT_EQ(n, 3);
  const Status narrow = feed->Insert(processes, RowsOf(5, [](size_t i, QueryRow& row) {
                                       row.Int(0).Int(static_cast<int64_t>(i));
                                       if (i != 2) row.Text("p");
                                     }));
  ASSERT_FALSE(narrow.ok());
  EXPECT_NE(narrow.message().find("row 2 of processes has 2 values for 3 columns"),
            std::string::npos)
      << narrow.message();
  // The virtual table is not in the database's schema.
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT count(*) FROM sqlite_schema WHERE name LIKE '%rows%'",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 0), 0);
  sqlite3_finalize(st);
}

}  // namespace
}  // namespace sightline
