// The page reader of the nsys importer (sqlite_pages.h) against SQLite itself: the same rows and
// drops on tables of every integer width, NULLs, text, reals, blobs, spilled records and columns
// added later; the tables it leaves to SQLite; and damaged pages, which stop it with an error.
#include "importers/nsys/sqlite_pages.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "importers/nsys/sqlite_db.h"
#include "nsys_test_exports.h"

namespace sightline {
namespace {

using nsys_test::Db;
using nsys_test::TempDir;

// Collects what a scan hands on.
class Rows : public SqlitePageSink {
 public:
  explicit Rows(size_t columns, int64_t stop_after = -1)
      : columns_(columns), stop_after_(stop_after) {}
  int64_t* NextRow() override {
    next_.assign(columns_, 0);
    return next_.data();
  }
  bool Commit() override {
    rows.push_back(next_);
    return static_cast<int64_t>(rows.size()) != stop_after_;
  }
  void WrongType() override { ++wrong_type; }

  std::vector<std::vector<int64_t>> rows;
  int64_t wrong_type = 0;

 private:
  size_t columns_;
  int64_t stop_after_;
  std::vector<int64_t> next_;
};

// What SQLite reads for the same columns, with the scan's rules: an integer is taken, NULL reads
// as null_as (else the row is dropped), anything else drops the row.
Rows ReadThroughSqlite(const std::string& path, const std::string& table,
                       const std::vector<std::string>& chosen,
                       const std::vector<const char*>& null_as) {
  Rows rows(chosen.size());
  std::string sql = "SELECT ";
  for (size_t i = 0; i < chosen.size(); ++i) {
    sql += (i ? ", " : "") + (chosen[i].empty() ? std::string("NULL") : chosen[i]);
  }
  sql += " FROM " + table;
  sqlite3* db = nullptr;
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  std::vector<int64_t> values(chosen.size());
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    bool ok = true;
    for (size_t c = 0; c < chosen.size() && ok; ++c) {
      const int type = sqlite3_column_type(stmt, static_cast<int>(c));
      if (type == SQLITE_INTEGER) {
        values[c] = sqlite3_column_int64(stmt, static_cast<int>(c));
      } else if (type == SQLITE_NULL && null_as[c] != nullptr) {
        values[c] = std::stoll(null_as[c]);
      } else {
        ok = false;
      }
    }
    if (ok) {
      std::copy(values.begin(), values.end(), rows.NextRow());
      rows.Commit();
    } else {
      rows.WrongType();
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  return rows;
}

struct Scanned {
  Status status;
  Rows rows{0};
};

Scanned ScanByPages(const std::string& path, const std::string& table,
                    const std::vector<std::string>& chosen, const std::vector<const char*>& null_as,
                    int64_t stop_after = -1) {
  Scanned out;
  StatusOr<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  if (!db.ok()) {
    out.status = db.status();
    return out;
  }
  StatusOr<SqlitePagePlan> plan = PlanSqlitePageScan(*db, table, chosen, null_as);
  if (!plan.ok()) {
    out.status = plan.status();
    return out;
  }
  StatusOr<std::unique_ptr<SqlitePages>> pages = SqlitePages::Open(*db);
  if (!pages.ok()) {
    out.status = pages.status();
    return out;
  }
  out.rows = Rows(chosen.size(), stop_after);
  out.status = ScanSqlitePages(**pages, *plan, out.rows);
  return out;
}

// A table of 3,000 rows on 512-byte pages (a b-tree three levels deep) holding integers of every
// stored width, NULLs, text, reals and blobs, some records spilling to overflow pages, and a
// column added after the first half of the rows was written.
void WriteValuesTable(const std::string& path) {
  Db db(path, /*create=*/true);
  db.Exec("PRAGMA page_size = 512; VACUUM");
  db.Exec("CREATE TABLE t (a INTEGER, b INTEGER, c TEXT, d INTEGER, e BLOB, f INTEGER, r REAL)");
  static const char* kValues[] = {"0",
                                  "1",
                                  "-1",
                                  "127",
                                  "-128",
                                  "32767",
                                  "40000",
                                  "-8388608",
                                  "2147483648",
                                  "-1099511627776",
                                  "140737488355327",
                                  "-9223372036854775808",
                                  "9223372036854775807",
                                  "NULL",
                                  "'text'",
                                  "1.5",
                                  "x'00ff'"};
  constexpr int kCount = sizeof(kValues) / sizeof(kValues[0]);
  db.Exec("BEGIN");
  for (int i = 0; i < 3000; ++i) {
    if (i == 1500) db.Exec("ALTER TABLE t ADD COLUMN g INTEGER");
    // Every 50th row carries 2,000 bytes of text before d and f: its record spills.
    const std::string c = i % 50 == 0 ? "printf('%.2000c', 'x')" : "'k'";
    std::string row = std::to_string(i) + ", " + kValues[i % kCount] + ", " + c + ", " +
                      kValues[(i * 7) % kCount] + ", NULL, " + kValues[(i / 3) % 13] + ", 2.5";
    if (i >= 1500) row += std::string(", ") + kValues[(i * 5) % 14];
    db.Exec("INSERT INTO t (a, b, c, d, e, f, r" + std::string(i >= 1500 ? ", g" : "") +
            ") VALUES (" + row + ")");
  }
  db.Exec("COMMIT");
}

TEST(SqlitePages, ReadsWhatSqliteReads) {
  TempDir dir;
  const std::string path = dir.File("values.sqlite");
  WriteValuesTable(path);
  const std::vector<std::string> chosen = {"a", "b", "d", "f", "g", "", "a"};
  const std::vector<const char*> null_as = {nullptr, "-1", nullptr, "0", "7", "-1", nullptr};
  const Rows want = ReadThroughSqlite(path, "t", chosen, null_as);
  const Scanned got = ScanByPages(path, "t", chosen, null_as);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_GT(want.rows.size(), 500u);
  EXPECT_GT(want.wrong_type, 500);
  EXPECT_EQ(got.rows.rows, want.rows);
  EXPECT_EQ(got.rows.wrong_type, want.wrong_type);
}

TEST(SqlitePages, ConstantWithoutNullAsDropsEveryRow) {
  TempDir dir;
  const std::string path = dir.File("values.sqlite");
  WriteValuesTable(path);
  const Scanned got = ScanByPages(path, "t", {"a", ""}, {nullptr, nullptr});
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_TRUE(got.rows.rows.empty());
  EXPECT_EQ(got.rows.wrong_type, 3000);
}

TEST(SqlitePages, SinkStopsTheScan) {
  TempDir dir;
  const std::string path = dir.File("values.sqlite");
  WriteValuesTable(path);
  const Scanned got = ScanByPages(path, "t", {"a"}, {nullptr}, /*stop_after=*/10);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  ASSERT_EQ(got.rows.rows.size(), 10u);
  EXPECT_EQ(got.rows.rows[9][0], 9);
}

TEST(SqlitePages, LeavesToSqliteWhatSqliteWouldChange) {
  TempDir dir;
  const std::string path = dir.File("plans.sqlite");
  {
    Db db(path, /*create=*/true);
    db.Exec("CREATE TABLE k (id INTEGER PRIMARY KEY, v INTEGER, w INTEGER DEFAULT 5, x REAL)");
    db.Exec("CREATE TABLE wr (id INTEGER PRIMARY KEY, v INTEGER) WITHOUT ROWID");
    db.Exec("INSERT INTO k (v) VALUES (1); INSERT INTO wr VALUES (1, 2)");
  }
  StatusOr<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto plan = [&](const std::string& table, const std::string& column, const char* null_as) {
    const std::vector<std::string> chosen = {column};
    const std::vector<const char*> nulls = {null_as};
    return PlanSqlitePageScan(*db, table, chosen, nulls).status();
  };
  EXPECT_TRUE(plan("k", "v", nullptr).ok());
  EXPECT_EQ(plan("k", "id", nullptr).code(), StatusCode::kUnimplemented);  // the rowid
  EXPECT_EQ(plan("k", "w", nullptr).code(), StatusCode::kUnimplemented);   // a DEFAULT
  EXPECT_EQ(plan("k", "x", nullptr).code(), StatusCode::kUnimplemented);   // REAL affinity
  EXPECT_EQ(plan("k", "", "abc").code(), StatusCode::kUnimplemented);      // not an integer
  EXPECT_EQ(plan("wr", "v", nullptr).code(), StatusCode::kUnimplemented);  // WITHOUT ROWID
}

// The file's bytes, for damaging them.
std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}
uint32_t Get32At(const std::string& bytes, size_t at) {
  return static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) << 24 |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 8 |
         static_cast<uint8_t>(bytes[at + 3]);
}
void Put32At(std::string& bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>(v >> (24 - 8 * i));
}

class DamagedPages : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("damaged.sqlite");
    WriteValuesTable(path_);
    Db db(path_);
    root_ = static_cast<uint32_t>(db.Int("SELECT rootpage FROM sqlite_schema WHERE name = 't'"));
    bytes_ = ReadAll(path_);
    ASSERT_EQ(bytes_[Offset(root_)], 0x05) << "the root should be an interior page";
  }
  size_t Offset(uint32_t page) const { return size_t{page - 1} * 512; }
  // Scans the damaged file: InvalidInput naming the file, and no rows past the damage.
  void ExpectCorrupt(const std::string& what) {
    WriteAll(path_, bytes_);
    const Scanned got = ScanByPages(path_, "t", {"a"}, {nullptr});
    EXPECT_EQ(got.status.code(), StatusCode::kInvalidInput) << got.status.ToString();
    EXPECT_NE(got.status.message().find(what), std::string::npos) << got.status.message();
    EXPECT_NE(got.status.message().find(path_), std::string::npos);
  }

  TempDir dir_;
  std::string path_, bytes_;
  uint32_t root_ = 0;
};

TEST_F(DamagedPages, ALoopIsRefused) {
  Put32At(bytes_, Offset(root_) + 8, root_);  // the right-most child is the root itself
  ExpectCorrupt("reached twice");
}

TEST_F(DamagedPages, AChildOutsideTheFileIsRefused) {
  Put32At(bytes_, Offset(root_) + 8, 1u << 30);
  ExpectCorrupt("out of range");
}

TEST_F(DamagedPages, AWrongPageTypeIsRefused) {
  const uint32_t child = Get32At(bytes_, Offset(root_) + 8);
  bytes_[Offset(child)] = 0x0A;  // an index leaf where a table page belongs
  ExpectCorrupt("page type 10");
}

TEST_F(DamagedPages, ACellPastItsPageIsRefused) {
  const uint32_t child = Get32At(bytes_, Offset(root_) + 8);
  bytes_[Offset(child) + 12] = static_cast<char>(0xFF);  // the first cell pointer: 0xFFxx
  ExpectCorrupt("outside its page");
}

}  // namespace
}  // namespace sightline
