// Since Nsight Systems 2025.6 an export's rows come in no guaranteed order. Every table of a real
// export is rewritten here in a random row order; the report must not change.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "testing/cli_runner.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;

std::string ReportWithoutNames(const std::string& path) {
  testing::CliResult r = testing::RunSightline("analyze --format json '" + path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  static const std::regex kNames("\"(path|label)\": \"[^\"]*\"");
  return std::regex_replace(r.out, kNames, "");
}

void ShuffleEveryTable(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::vector<std::string> tables;
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
                               "LIKE 'sqlite_%'",
                               -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  }
  sqlite3_finalize(st);
  // A fixed scramble of the row order (the same in every run, far from time order).
  for (const std::string& t : tables) {
    const std::string q = "\"" + t + "\"";
    const std::string sql = "CREATE TEMP TABLE shuffled AS SELECT * FROM " + q +
                            " ORDER BY (rowid * 7919) % 10007 DESC, rowid DESC; DELETE FROM " + q +
                            "; INSERT INTO " + q + " SELECT * FROM shuffled; DROP TABLE shuffled;";
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << t << ": " << (err ? err : "");
  }
  sqlite3_close(db);
}

class NsysRowOrder : public ::testing::TestWithParam<const char*> {};

TEST_P(NsysRowOrder, ShuffledRowsGiveTheSameReport) {
  const std::string original = std::string(SIGHTLINE_SOURCE_DIR) + "/" + GetParam();
  const std::string copy =
      (fs::temp_directory_path() / ("sightline_shuffled_" + std::to_string(::getpid()) + ".sqlite"))
          .string();
  fs::copy_file(original, copy, fs::copy_options::overwrite_existing);
  ShuffleEveryTable(copy);
  EXPECT_EQ(ReportWithoutNames(original), ReportWithoutNames(copy));
  fs::remove(copy);
}

INSTANTIATE_TEST_SUITE_P(Samples, NsysRowOrder,
                         ::testing::Values("examples/samples/llama_decode_h100.nsys.sqlite",
                                           "examples/samples/host_loop_h100.nsys.sqlite",
                                           "examples/samples/gpu_memory_h200.nsys.sqlite",
                                           "tests/data/nsys/decode_loop_graph_trace_h100.sqlite"));

}  // namespace
}  // namespace sightline
