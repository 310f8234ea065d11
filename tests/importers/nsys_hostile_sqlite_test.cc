// The nsys reader against SQLite files built to attack it (docs/reliability.md, "SQLite files"):
// views and other objects that are not plain tables under the names it reads, queries without
// end, names SQLite would take as URIs, unfinished writes beside the file, triggers. Each case is
// a tiny export built here; each asserts a clear error (or the right file read), no hang, and
// nothing written beside the input.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "importers/importer.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/nsys/sqlite_db.h"
#include "importers/nsys/sqlite_guard.h"
#include "importers/nsys/sqlite_input.h"
#include "model/trace.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Runs `sql` on the database at `path` (created if absent); a test failure when SQLite refuses.
void Exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << sql << ": " << (error ? error : "?");
  sqlite3_free(error);
  sqlite3_close(db);
}

// The tables of a small export, each with the columns the importer reads; `skip` is left out (a
// test puts a view or another object in its place).
void CreateExport(const std::string& path, int kernels, const std::string& skip = "") {
  std::string sql =
      "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
      "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.16.1');";
  if (skip != "StringIds") {
    sql +=
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "INSERT INTO StringIds VALUES (1, 'void gemm<float>(float*)'), (2, 'gemm'),"
        " (3, 'cudaLaunchKernel_v7000'), (4, 'step');";
  }
  if (skip != "CUPTI_ACTIVITY_KIND_KERNEL") {
    sql +=
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
        " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,"
        " shortName INTEGER);";
    for (int i = 0; i < kernels; ++i) {
      sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(1000 + i * 1000) +
             ", " + std::to_string(1500 + i * 1000) + ", 0, 7, " + std::to_string(i + 1) +
             ", 16777216, 1, 2);";
    }
  }
  if (skip != "CUPTI_ACTIVITY_KIND_RUNTIME") {
    sql +=
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass "
        "INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900, 950, 0, 16777217, 1, 3);";
  }
  if (skip != "NVTX_EVENTS") {
    sql +=
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"
        " globalTid INTEGER, textId INTEGER, domainId INTEGER);"
        "INSERT INTO NVTX_EVENTS VALUES (800, 1800, 59, 'step', 16777217, NULL, 0);";
  }
  Exec(path, sql);
}

// A view that never ends: rows counted up from 1 for ever, under every column name the importer
// may ask for.
std::string EndlessView(const std::string& name) {
  std::string columns;
  for (const char* c : {"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
                        "demangledName", "shortName", "eventClass", "globalTid", "nameId",
                        "eventType", "text", "textId", "domainId", "id", "value"}) {
    columns += std::string(columns.empty() ? "" : ", ") + "x AS " + c;
  }
  return "CREATE VIEW " + name +
         " AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT " + columns +
         " FROM c";
}

// The names of the files in `dir`, and each file's bytes, to show that nothing changed.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    files[e.path().filename().string()] =
        e.is_regular_file() ? testing::Slurp(e.path().string()) : "";
  }
  return files;
}

std::set<std::string> Names(const std::map<std::string, std::string>& snapshot) {
  std::set<std::string> names;
  for (const auto& [name, bytes] : snapshot) names.insert(name);
  return names;
}

void ExpectError(const StatusOr<Trace>& trace, const std::string& path,
                 std::initializer_list<std::string> parts) {
  ASSERT_FALSE(trace.ok()) << path;
  EXPECT_EQ(trace.status().code(), StatusCode::kInvalidInput) << trace.status().ToString();
  EXPECT_NE(trace.status().message().find(path), std::string::npos) << trace.status().message();
  for (const std::string& part : parts) {
    EXPECT_NE(trace.status().message().find(part), std::string::npos)
        << "no \"" << part << "\" in: " << trace.status().message();
  }
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A fresh directory, removed with what is in it at the end of the test.
class ScratchDir {
 public:
  ScratchDir() : path_(testing::MakeTempDir()) {}
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs in `dir` while alive: relative names like "file:x.sqlite" reach the reader as given.
class InDirectory {
 public:
  explicit InDirectory(const std::string& dir) : old_(fs::current_path()) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(old_); }

 private:
  fs::path old_;
};

// ---- Objects that are not plain tables ----

class NsysEndlessView : public ::testing::TestWithParam<const char*> {};

// A kernel, event or string table that is a view over an endless recursive query: refused by its
// name, at once, instead of running for ever.
TEST_P(NsysEndlessView, IsRefusedAsAViewAtOnce) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string path = dir + "/view.sqlite";
  const std::string table = GetParam();
  CreateExport(path, 2, table);
  Exec(path, EndlessView(table));
  const auto before = Snapshot(dir);
  const Clock::time_point start = Clock::now();
  ExpectError(ImportTrace(path), path,
              {"table " + table + " is a view, not a table of an nsys export",
               "nsys export --type sqlite"});
  EXPECT_LT(SecondsSince(start), 10.0);
  EXPECT_EQ(Snapshot(dir), before);
}

INSTANTIATE_TEST_SUITE_P(Tables, NsysEndlessView,
                         ::testing::Values("CUPTI_ACTIVITY_KIND_KERNEL", "NVTX_EVENTS", "StringIds",
                                           "CUPTI_ACTIVITY_KIND_RUNTIME"));

// A view's name is matched as SQLite matches it, without regard to case.
TEST(NsysHostileSqlite, AViewNamedInOtherCaseIsRefusedToo) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string path = dir + "/view.sqlite";
  CreateExport(path, 2, "NVTX_EVENTS");
  Exec(path, EndlessView("nvtx_events"));
  StatusOr<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  StatusOr<SqliteStatement> stmt = db->Prepare("SELECT start FROM NVTX_EVENTS");
  ASSERT_FALSE(stmt.ok());
  EXPECT_NE(stmt.status().message().find("table NVTX_EVENTS is a view"), std::string::npos)
      << stmt.status().message();
}

TEST(NsysHostileSqlite, VirtualTablesAndGeneratedColumnsAreRefused) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string fts = dir + "/fts.sqlite";
  CreateExport(fts, 0, "CUPTI_ACTIVITY_KIND_KERNEL");
  Exec(fts, "CREATE VIRTUAL TABLE CUPTI_ACTIVITY_KIND_KERNEL USING fts5(start, end)");
  ExpectError(ImportTrace(fts), fts,
              {"table CUPTI_ACTIVITY_KIND_KERNEL is a virtual table, not a table of an nsys "
               "export"});
  // A computed column runs an expression the file supplies on every row read.
  const std::string generated = dir + "/generated.sqlite";
  CreateExport(generated, 0, "CUPTI_ACTIVITY_KIND_KERNEL");
  Exec(generated,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, demangledName "
       "INTEGER, shortName INTEGER AS (length(zeroblob(100000000))))");
  ExpectError(ImportTrace(generated), generated,
              {"table CUPTI_ACTIVITY_KIND_KERNEL is a table with generated (computed) columns"});
  // Read directly, by SQL that never asked for the columns first: refused when prepared.
  StatusOr<SqliteDb> db = SqliteDb::OpenReadOnly(generated);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  StatusOr<SqliteStatement> stmt = db->Prepare("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL");
  ASSERT_FALSE(stmt.ok());
  EXPECT_NE(stmt.status().message().find("generated"), std::string::npos)
      << stmt.status().message();
}

// ---- The step budget ----

TEST(NsysHostileSqlite, AQueryPastItsStepBudgetEndsWithAClearError) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string path = dir + "/plain.sqlite";
  CreateExport(path, 2);
  StatusOr<SqliteDb> db = SqliteDb::OpenReadOnly(path, {.max_steps = 2'000'000});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  StatusOr<SqliteStatement> stmt = db->Prepare(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
      "SELECT count(*) FROM c");
  ASSERT_TRUE(stmt.ok()) << stmt.status().ToString();
  const Clock::time_point start = Clock::now();
  EXPECT_FALSE(stmt->Step());
  EXPECT_LT(SecondsSince(start), 10.0);
  const Status& status = stmt->status();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  for (const char* part : {"gave up while reading rows of `WITH RECURSIVE", "2000000 SQLite steps",
                           "nsys export --type sqlite"}) {
    EXPECT_NE(status.message().find(part), std::string::npos) << status.message();
  }
  // The default grows with the database: far beyond what a real export needs (the real exports'
  // imports in the other tests run under it), never below the floor for small files.
  EXPECT_EQ(DefaultSqliteStepBudget(1 << 30), int64_t{100} << 30);
  EXPECT_EQ(DefaultSqliteStepBudget(4096), 100'000'000);
  EXPECT_EQ(DefaultSqliteStepBudget(INT64_MAX / 10), INT64_MAX);
}

// ---- Names ----

TEST(NsysHostileSqlite, PathsAreEscapedIntoTheUri) {
  EXPECT_EQ(PercentEscapePath("/a b/file:x?mode=rw#%&.sqlite"),
            "/a%20b/file%3Ax%3Fmode%3Drw%23%25%26.sqlite");
  EXPECT_EQ(PercentEscapePath("/dir/r\xC3\xA9sum\xC3\xA9_1~2-3.sqlite"),
            "/dir/r%C3%A9sum%C3%A9_1~2-3.sqlite");
}

// "file:decoy.sqlite" is the file of that name, not decoy.sqlite; "file:x?mode=rw" likewise.
TEST(NsysHostileSqlite, FileColonNamesAreReadAsNames) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  CreateExport(dir + "/decoy.sqlite", 3);
  CreateExport(dir + "/file:decoy.sqlite", 1);
  CreateExport(dir + "/file:x?mode=rw", 2);
  CreateExport(dir + "/x", 5);
  InDirectory in(dir);
  const auto before = Snapshot(dir);
  StatusOr<Trace> named = ImportTrace("file:decoy.sqlite");
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(named->kernels.size(), 1u);
  StatusOr<Trace> query = ImportTrace("file:x?mode=rw");
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  EXPECT_EQ(query->kernels.size(), 2u);
  // A name that exists only as a URI's target is not there.
  StatusOr<Trace> absent = ImportNsysSqlite("file:x");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound) << absent.status().ToString();
  EXPECT_EQ(Snapshot(dir), before);
}

// The CLI writes only the output named, and never over an input, whatever its name or links.
TEST(NsysHostileSqlite, OutputsGoOnlyWhereNamedAndNeverOverAnInput) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  CreateExport(dir + "/decoy.sqlite", 3);
  CreateExport(dir + "/file:decoy.sqlite", 7);
  fs::create_symlink("file:decoy.sqlite", dir + "/link.sqlite");
  fs::create_hard_link(dir + "/file:decoy.sqlite", dir + "/hard.sqlite");
  InDirectory in(dir);
  auto before = Snapshot(dir);
  testing::CliResult r =
      testing::RunSightline("analyze file:decoy.sqlite -o report.txt --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto after = Snapshot(dir);
  ASSERT_TRUE(after.contains("report.txt"));
  // The report is of file:decoy.sqlite's 7 kernels, not decoy.sqlite's 3.
  EXPECT_NE(after["report.txt"].find("\"kernels\": 7,"), std::string::npos) << after["report.txt"];
  EXPECT_EQ(after["report.txt"].find("\"kernels\": 3,"), std::string::npos) << after["report.txt"];
  after.erase("report.txt");
  EXPECT_EQ(after, before) << "a file other than report.txt was written";
  fs::remove("report.txt");
  for (const char* output : {"file:decoy.sqlite", "link.sqlite", "hard.sqlite"}) {
    r = testing::RunSightline(std::string("analyze file:decoy.sqlite -o '") + output + "'");
    EXPECT_EQ(r.exit_code, 2) << output << ": " << r.err;
    EXPECT_NE(r.err.find("refusing to write the output over an input"), std::string::npos) << r.err;
    EXPECT_EQ(Snapshot(dir), before) << output;
  }
}

// ---- Unfinished writes beside the file ----

// A copy of an export taken while a transaction was writing it, with its hot rollback journal.
void WriteHotJournalCopy(const std::string& dir, const std::string& path) {
  const std::string original = dir + "/writing.sqlite";
  CreateExport(original, 2);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(original.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "PRAGMA cache_size = 1; BEGIN; WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL "
                         "SELECT i + 1 FROM c WHERE i < 5000) INSERT INTO StringIds SELECT 100 + "
                         "i, 'some text for a page ' || i FROM c",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_TRUE(fs::exists(original + "-journal"));
  fs::copy_file(original, path);
  fs::copy_file(original + "-journal", path + "-journal");
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  fs::remove(original);
}

TEST(NsysHostileSqlite, AHotJournalIsRefusedWithWhatToDo) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  // A name the advice must quote for the shell, and must not let sqlite3 take as a URI.
  const std::string path = dir + "/file:my export.sqlite";
  WriteHotJournalCopy(dir, path);
  const std::string real = fs::canonical(path).string();  // as the message names the journal
  const auto before = Snapshot(dir);
  ExpectError(
      ImportTrace(path), path,
      {real + "-journal beside it holds unfinished writes", "hot rollback journal",
       "wait for it to finish", "`sqlite3 '" + real + "' 'SELECT count(*) FROM sqlite_master;'`",
       "`sqlite3 '" + real + "' '.backup copy.sqlite'`"});
  EXPECT_EQ(Snapshot(dir), before);
  // Through a symbolic link: the journal beside the file the link leads to counts.
  fs::create_symlink(path, dir + "/link.sqlite");
  ExpectError(ImportTrace(dir + "/link.sqlite"), dir + "/link.sqlite",
              {real + "-journal beside it"});
  // The advice works: one read by sqlite3 rolls the journal back, and then the file reads.
  Exec(path, "SELECT count(*) FROM sqlite_master;");
  EXPECT_FALSE(fs::exists(path + "-journal"));
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->kernels.size(), 2u);
}

// A journal that is empty or whose header is zeroed (journal_mode TRUNCATE, PERSIST) is finished.
TEST(NsysHostileSqlite, AFinishedJournalIsNoObstacle) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string path = dir + "/export.sqlite";
  CreateExport(path, 2);
  for (const std::string& journal : {std::string(), std::string(512, '\0')}) {
    std::ofstream(path + "-journal", std::ios::binary) << journal;
    StatusOr<Trace> trace = ImportTrace(path);
    ASSERT_TRUE(trace.ok()) << trace.status().ToString();
    EXPECT_EQ(trace->kernels.size(), 2u);
  }
}

// A copy of a WAL-mode export, with a log holding a commit not yet in the database when `wal`.
void WriteWalCopy(const std::string& dir, const std::string& path, bool wal) {
  const std::string original = dir + "/writing.sqlite";
  CreateExport(original, 2);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(original.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; INSERT INTO "
                         "CUPTI_ACTIVITY_KIND_KERNEL VALUES (9000, 9500, 0, 7, 3, 16777216, 1, 2)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  fs::copy_file(original, path);
  if (wal) fs::copy_file(original + "-wal", path + "-wal");
  sqlite3_close(db);
  fs::remove(original);
  fs::remove(original + "-wal");
  fs::remove(original + "-shm");
}

TEST(NsysHostileSqlite, AWriteAheadLogIsRefusedWithWhatToDo) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string path = dir + "/export.sqlite";
  WriteWalCopy(dir, path, /*wal=*/true);
  const std::string real = fs::canonical(path).string();
  const auto before = Snapshot(dir);
  ExpectError(ImportTrace(path), path,
              {real + "-wal beside it holds unfinished writes",
               "`sqlite3 " + real + " 'PRAGMA wal_checkpoint;'`",
               "`sqlite3 " + real + " '.backup copy.sqlite'`"});
  EXPECT_EQ(Snapshot(dir), before);
  // The advice works: the checkpoint folds the third kernel in (and sqlite3 removes the log).
  Exec(path, "PRAGMA wal_checkpoint;");
  EXPECT_FALSE(fs::exists(path + "-wal"));
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->kernels.size(), 3u);
}

// A WAL-mode database alone is read immutably: SQLite would otherwise create NAME-shm and
// NAME-wal beside it, even on a read-only connection.
TEST(NsysHostileSqlite, ReadingCreatesNothingBesideTheInput) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string path = dir + "/export.sqlite";
  WriteWalCopy(dir, path, /*wal=*/false);
  const auto before = Snapshot(dir);
  ASSERT_EQ(Names(before), std::set<std::string>{"export.sqlite"});
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->kernels.size(), 2u);
  EXPECT_EQ(Snapshot(dir), before);
}

// ---- Triggers, and page sizes ----

// Triggers on every table, that would log and rewrite rows: reading fires none, and the file is
// unchanged to the byte.
TEST(NsysHostileSqlite, TriggersNeverFireOnReads) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  const std::string path = dir + "/triggers.sqlite";
  CreateExport(path, 2);
  std::string sql = "CREATE TABLE fired (what TEXT);";
  for (const char* table :
       {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"}) {
    for (const char* event : {"INSERT", "UPDATE", "DELETE"}) {
      sql += std::string("CREATE TRIGGER t_") + table + "_" + event + " AFTER " + event + " ON " +
             table + " BEGIN INSERT INTO fired VALUES ('" + table + "'); DELETE FROM " + table +
             "; END;";
    }
  }
  Exec(path, sql);
  const auto before = Snapshot(dir);
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->kernels.size(), 2u);
  EXPECT_EQ(Snapshot(dir), before);
}

// The smallest and the largest page size SQLite writes read alike.
TEST(NsysHostileSqlite, OddPageSizesRead) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  for (const int page_size : {512, 65536}) {
    const std::string path = dir + "/p" + std::to_string(page_size) + ".sqlite";
    CreateExport(path, 4);
    Exec(path, "PRAGMA page_size = " + std::to_string(page_size) + "; VACUUM;");
    StatusOr<Trace> trace = ImportTrace(path);
    ASSERT_TRUE(trace.ok()) << page_size << ": " << trace.status().ToString();
    EXPECT_EQ(trace->kernels.size(), 4u) << page_size;
  }
}

}  // namespace
}  // namespace sightline
