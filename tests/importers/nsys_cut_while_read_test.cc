// An nsys export cut shorter while SQLite reads it through its memory map: an error that says
// so, not SIGBUS (docs/reliability.md, rule 7; issue 53).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/mapped_reads.h"
#include "importers/nsys/sqlite_db.h"
#include "testing/cli_runner.h"
#include "testing/sanitizers.h"

namespace sightline {
namespace {

TEST(NsysCutWhileRead, TheReadEndsInAClearErrorNotSigbus) {
  if (testing::kUnderSanitizer) GTEST_SKIP() << "the sanitizer handles SIGBUS itself";
  const std::string path = testing::MakeTempDir() + "/export.sqlite";
  std::filesystem::copy_file(
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/nsys/memory_app_h200.sqlite", path);
  const MappedReadCheck cut(path);
  StatusOr<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  // Every page of every table, through the map.
  auto read_everything = [&] {
    StatusOr<SqliteStatement> tables =
        db->Prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
    if (!tables.ok()) return;
    std::vector<std::string> names;
    while (tables->Step()) names.emplace_back(tables->Text(0));
    for (const std::string& name : names) {
      StatusOr<SqliteStatement> rows = db->Prepare("SELECT * FROM \"" + name + "\"");
      if (!rows.ok()) continue;
      while (rows->Step()) {
      }
    }
  };
  read_everything();
  ASSERT_TRUE(cut.Check().ok());
  ASSERT_EQ(::truncate(path.c_str(), 8192), 0);  // another program cuts it to two pages
  read_everything();                             // before: SIGBUS
  const Status s = cut.Check();
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("the file was cut shorter while it was read"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace sightline
