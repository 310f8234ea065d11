// `sightline query` as a program: formats, saved databases, exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

using testing::RunSightline;

const std::string kLlama =
    std::string("'") + SIGHTLINE_SOURCE_DIR + "/examples/samples/llama_decode_h100.nsys.sqlite'";

TEST(QueryCli, FormatsAndSavedDatabase) {
  const std::string sql = " 'SELECT count(*) AS n, sum(dur_ns) AS total_ns FROM kernels'";
  const auto csv = RunSightline("query " + kLlama + sql + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "n,total_ns\r\n15476,41404725\r\n");
  const auto json = RunSightline("query " + kLlama + sql + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out,
            "{\"columns\":[\"n\",\"total_ns\"],\"rows\":[[15476,41404725]],\"truncated\":false}\n");
  const std::string dir = testing::MakeTempDir();
  const auto save = RunSightline("query " + kLlama + " --save " + dir + "/run.sldb");
  ASSERT_EQ(save.exit_code, 0) << save.err;
  const auto again = RunSightline("query " + dir + "/run.sldb" + sql + " --format csv");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, csv.out);
  const auto table =
      RunSightline("query " + dir + "/run.sldb 'SELECT id FROM kernels' --max-rows 2");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("(2 rows; more rows were left out"), std::string::npos) << table.out;
}

TEST(QueryCli, BadQueriesAndInputsAreExit2) {
  const auto missing = RunSightline("query " + kLlama + " 'SELECT * FROM kernel'");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no such table: kernel; the tables are:"), std::string::npos);
  const auto write = RunSightline("query " + kLlama + " 'DELETE FROM kernels'");
  EXPECT_EQ(write.exit_code, 2);
  EXPECT_EQ(write.out, "");
  const auto named = RunSightline("query " + kLlama + " @no_such_question");
  EXPECT_EQ(named.exit_code, 2);
  EXPECT_NE(named.err.find("@slowest_iterations"), std::string::npos);
  // --save onto the input: refused before anything is written.
  const auto over = RunSightline("query " + kLlama + " --save " + kLlama);
  EXPECT_EQ(over.exit_code, 2);
  const auto no_sql = RunSightline("query " + kLlama + " " + kLlama);
  EXPECT_EQ(no_sql.exit_code, 2);
  EXPECT_NE(no_sql.err.find("is a file, and the last argument is the SQL"), std::string::npos)
      << no_sql.err;
  const auto none = RunSightline("query 'SELECT 1'");
  EXPECT_EQ(none.exit_code, 2);
  const auto list = RunSightline("query --list");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("@layer_category_share"), std::string::npos);
}

}  // namespace
}  // namespace sightline
