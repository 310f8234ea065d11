// sightline redact, one small input per way a secret once survived it (issue 53): each planted in
// an export (or a recording) built here, and looked for in every byte of the copy, in any case,
// free pages included.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "base/file_io.h"
#include "exporters/redact.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;

const std::string kRoot = SIGHTLINE_SOURCE_DIR;
// A small export of a real capture (already redacted: it holds no identity of its own).
const std::string kBase = kRoot + "/tests/data/nsys/decode_loop_graph_trace_h100.sqlite";

std::string TempPath(const std::string& name) {
  return (fs::temp_directory_path() /
          ("sightline_redact_leaks_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// A copy of kBase with `sql` run on it.
std::string PlantedExport(const std::string& name, const std::string& sql) {
  const std::string path = TempPath(name);
  fs::copy_file(kBase, path, fs::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err != nullptr ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return path;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Whether any byte of the file spells `secret`, in any case.
bool FileHolds(const std::string& path, const std::string& secret) {
  StatusOr<std::string> bytes = ReadFileToString(path);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() && Lower(*bytes).find(Lower(secret)) != std::string::npos;
}

std::string Redacted(const std::string& original) {
  const std::string copy = original + ".redacted";
  StatusOr<RedactSummary> sum = RedactFile(original, copy);
  EXPECT_TRUE(sum.ok()) << sum.status().ToString();
  return copy;
}

std::string ReportWithoutPaths(const std::string& path) {
  testing::CliResult r = testing::RunSightline("analyze --format json '" + path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  static const std::regex kNames("\"(path|label)\": \"[^\"]*\"");
  return std::regex_replace(r.out, kNames, "");
}

// `redact --check COPY --against ORIGINAL`: its exit code.
int Check(const std::string& copy, const std::string& original) {
  return testing::RunSightline("redact --check '" + copy + "' --against '" + original + "'")
      .exit_code;
}

TEST(RedactLeaks, CommandLineSecretsInBothForms) {
  // nsys keeps the command line one argument a row: PROCESS_n:ARGUMENT_k.
  const std::string original = PlantedExport(
      "argv.sqlite",
      "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ARGUMENT_7', '--api-key'),"
      "  ('PROCESS_0:ARGUMENT_8', 'sk-live-7Hq2ZxW9pL0'),"
      "  ('PROCESS_0:ARGUMENT_9', '--hf-token=hf_QwErTy123456'),"
      "  ('PROCESS_0:ARGUMENT_10', '--max-tokens'), ('PROCESS_0:ARGUMENT_11', '4096');"
      "INSERT INTO StringIds VALUES (100000, 'argv: --api-key SK-LIVE-7HQ2ZXW9PL0 x');");
  const std::string copy = Redacted(original);
  EXPECT_TRUE(FileHolds(original, "sk-live-7Hq2ZxW9pL0"));
  for (const char* secret : {"sk-live-7Hq2ZxW9pL0", "hf_QwErTy123456"}) {
    EXPECT_FALSE(FileHolds(copy, secret)) << secret;
  }
  EXPECT_TRUE(FileHolds(copy, "--hf-token=<redacted>"));  // the option says what was there
  EXPECT_TRUE(FileHolds(copy, "--max-tokens"));
  EXPECT_EQ(ReportWithoutPaths(original), ReportWithoutPaths(copy));
  EXPECT_EQ(Check(copy, original), 0);
  EXPECT_EQ(Check(original, original), 1);
  fs::remove(original);
  fs::remove(copy);
}

TEST(RedactLeaks, EnvironmentInLowerCaseWithExportOrBlanks) {
  const std::string original = PlantedExport(
      "env.sqlite",
      "UPDATE TARGET_INFO_SYSTEM_ENV SET value = "
      "  'http_proxy=http://proxyuser:pr0xyPass@proxy.corp:3128;export WANDB_API_KEY="
      "wandbsecret0123; SPECIAL_SETTING=verysecretvalue42' WHERE name = 'DeviceEnvironment';"
      "INSERT INTO META_DATA_CAPTURE VALUES "
      "  ('PROCESS_0:ENVIRONMENT_VARIABLE', ' export lower_case_var=lowercasesecret77');"
      "INSERT INTO StringIds VALUES (100000, "
      "'http_proxy=http://proxyuser:pr0xyPass@proxy.corp:3128'),"
      "  (100001, 'export WANDB_API_KEY=wandbsecret0123'), (100002, ' SPECIAL_SETTING=x'),"
      "  (100003, 'copied VERYSECRETVALUE42 and LowerCaseSecret77 into a log');");
  const std::string copy = Redacted(original);
  for (const char* secret :
       {"pr0xyPass", "wandbsecret0123", "verysecretvalue42", "lowercasesecret77"}) {
    EXPECT_TRUE(FileHolds(original, secret)) << secret;
    EXPECT_FALSE(FileHolds(copy, secret)) << secret;
  }
  EXPECT_EQ(ReportWithoutPaths(original), ReportWithoutPaths(copy));
  EXPECT_EQ(Check(copy, original), 0);
  fs::remove(original);
  fs::remove(copy);
}

TEST(RedactLeaks, UserNameEverywhere) {
  // Learned from the paths; then searched in every column, any case, paths and JSON included.
  const std::string original = PlantedExport(
      "user.sqlite",
      "INSERT INTO StringIds VALUES (100000, '/home/Zelda_Q/proj/run.py'),"
      "  (100001, '/scratch/zelda_q/ckpt/step_100.pt'), (100002, 'C:\\Users\\ZELDA_Q\\AppData'),"
      "  (100003, 'written by zelda_q');"
      "INSERT INTO PROCESSES VALUES (281532999999999, 77777, 'zelda_q_train');"
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, jsonText) "
      "  VALUES (684112200, 684112300, 59, 'step by Zelda_Q', 281532153466192, 1,"
      "          '{\"file\":\"C:\\\\Users\\\\zelda_q\\\\a.py\"}');"
      "INSERT INTO DIAGNOSTIC_EVENT VALUES (1, 1, 1, 1, 'cannot open /home/zelda_q/.nv', NULL);"
      "INSERT INTO ANALYSIS_FILE VALUES (9, '/home/zelda_q/analysis.log', 100003, 0);"
      "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:USER_NAME', 'zelda_q');");
  const std::string copy = Redacted(original);
  EXPECT_FALSE(FileHolds(copy, "zelda_q"));
  EXPECT_TRUE(FileHolds(copy, "/home/user/proj/run.py"));
  EXPECT_TRUE(FileHolds(copy, "C:\\Users\\user\\AppData"));
  EXPECT_EQ(Check(copy, original), 0);
  fs::remove(original);
  fs::remove(copy);
}

TEST(RedactLeaks, HostInAnyCaseAndItsDomain) {
  const std::string original = PlantedExport(
      "host.sqlite",
      "UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'gpu-node-17.cluster.example.org' "
      "  WHERE name = 'Hostname';"
      "UPDATE META_DATA_EXPORT SET value = 'GPU-NODE-17' WHERE name = 'EXPORT_HOST';"
      "INSERT INTO StringIds VALUES (100000, 'ran on GPU-NODE-17'),"
      "  (100001, 'ssh Gpu-Node-17.CLUSTER.EXAMPLE.ORG'), (100002, 'mail ops@example.org');");
  const std::string copy = Redacted(original);
  for (const char* secret : {"gpu-node-17", "example.org"}) {
    EXPECT_FALSE(FileHolds(copy, secret)) << secret;
  }
  EXPECT_TRUE(FileHolds(copy, HostPseudonym("gpu-node-17")));
  EXPECT_EQ(ReportWithoutPaths(original), ReportWithoutPaths(copy));
  EXPECT_EQ(Check(copy, original), 0);
  fs::remove(original);
  fs::remove(copy);
}

TEST(RedactLeaks, TriggerNeitherRunsNorIsCarriedOver) {
  // A trigger that would keep every old value in a table of its own, a view, an index, and a
  // deleted row whose bytes stay in the original's free pages (deleted last, with no trigger on
  // deletes from its table, so that its pages stay free and nothing kept a copy).
  const std::string original =
      PlantedExport("trigger.sqlite",
                    "PRAGMA secure_delete = OFF;"
                    "INSERT INTO StringIds VALUES (100000, 'FREEPAGE_' || hex(randomblob(3000)) || "
                    "  '_deletedsecretvalue');"
                    "CREATE TABLE stolen (value TEXT);"
                    "CREATE TRIGGER keep_update AFTER UPDATE ON StringIds BEGIN "
                    "  INSERT INTO stolen VALUES (old.value); END;"
                    "CREATE TRIGGER keep_delete AFTER DELETE ON META_DATA_CAPTURE BEGIN "
                    "  INSERT INTO stolen VALUES (old.value); END;"
                    "CREATE TRIGGER keep_insert AFTER INSERT ON StringIds BEGIN "
                    "  INSERT INTO stolen VALUES (new.value); END;"
                    "CREATE VIEW everything AS SELECT value FROM StringIds;"
                    "CREATE INDEX by_value ON StringIds(value);"
                    "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', "
                    "  'TRIGGER_BAIT=triggerbaitvalue99');"
                    "DELETE FROM StringIds WHERE id = 100000;");
  EXPECT_TRUE(FileHolds(original, "_deletedsecretvalue"));
  const std::string copy = Redacted(original);
  EXPECT_FALSE(FileHolds(copy, "_deletedsecretvalue"));
  EXPECT_FALSE(FileHolds(copy, "triggerbaitvalue99"));
  EXPECT_FALSE(FileHolds(copy, "keep_update"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(copy.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto count = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return n;
  };
  EXPECT_EQ(count("SELECT count(*) FROM sqlite_master WHERE type <> 'table'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stolen"), 0);  // copied as the (empty) table it was
  EXPECT_EQ(count("PRAGMA freelist_count"), 0);
  sqlite3_close_v2(db);
  // Nor did one run in the original.
  ASSERT_EQ(sqlite3_open_v2(original.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(count("SELECT count(*) FROM stolen"), 0);
  sqlite3_close_v2(db);
  EXPECT_EQ(ReportWithoutPaths(original), ReportWithoutPaths(copy));
  // A byte copy of such a file fails the check: it has the trigger, the view and free pages.
  testing::CliResult check =
      testing::RunSightline("redact --check '" + original + "' --against '" + original + "'");
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_NE(check.out.find("the trigger `keep_update`"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("free pages"), std::string::npos) << check.out;
  EXPECT_EQ(Check(copy, original), 0);
  fs::remove(original);
  fs::remove(copy);
}

TEST(RedactLeaks, NameValueRangeNamesKeepTheirNamesAndTheReport) {
  const std::string original = PlantedExport(
      "phase.sqlite",
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES "
      "  (684112200, 684400000, 59, 'PHASE=prefill', 281532153466192, 1),"
      "  (684400100, 684700000, 59, 'PHASE=decode', 281532153466192, 1);"
      "UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'HOME=/home/alice;MODEL=llama-3-8b' "
      "  WHERE name = 'DeviceEnvironment';");
  const std::string copy = Redacted(original);
  EXPECT_TRUE(FileHolds(copy, "PHASE=prefill"));
  EXPECT_TRUE(FileHolds(copy, "PHASE=decode"));
  const std::string report = ReportWithoutPaths(original);
  EXPECT_NE(report.find("PHASE=prefill"), std::string::npos);
  EXPECT_EQ(report, ReportWithoutPaths(copy));
  fs::remove(original);
  fs::remove(copy);
}

// A recording: every string, the memory records' source libraries included.
TEST(RedactLeaks, RecordingStringsAndMemorySources) {
  recfmt::ChunkBuilder chunk;
  recfmt::ProcessBody process{};
  process.pid = 4242;
  process.rank = -1;
  process.executable_string = 1;
  process.hostname_string = 2;
  chunk.Add(recfmt::RecordType::kProcess, process);
  chunk.AddString(1, "/home/yuki_t/bin/serve");
  chunk.AddString(2, "Rec-Host-42.lab.example.net");
  chunk.AddString(3, "/home/YUKI_T/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so");
  chunk.AddString(4, "load weights for yuki_t on rec-host-42");
  chunk.AddString(5, "gemm_kernel_128x128");
  recfmt::MemoryBody memory{};
  memory.time_ns = 1000;
  memory.bytes = 1 << 20;
  memory.operation = static_cast<uint32_t>(recfmt::MemoryOperation::kAllocation);
  memory.source_string = 3;
  chunk.Add(recfmt::RecordType::kMemory, memory);
  recfmt::RangeBody range{};
  range.start_ns = 1000;
  range.end_ns = 2000;
  range.pid = range.tid = range.end_tid = 4242;
  range.name_string = 4;
  chunk.Add(recfmt::RecordType::kRange, range);
  recfmt::ThreadBody thread{4242, 4242, 4, 0};
  chunk.Add(recfmt::RecordType::kThread, thread);
  const std::string original = TempPath("planted.slrec");
  ASSERT_TRUE(WriteFileAtomically(original, recfmt::FileHeaderBytes() + chunk.Finish()).ok());
  const std::string copy = TempPath("planted_copy.slrec");
  StatusOr<RedactSummary> sum = RedactFile(original, copy);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  for (const char* secret : {"yuki_t", "rec-host-42", "example.net"}) {
    EXPECT_TRUE(FileHolds(original, secret)) << secret;
    EXPECT_FALSE(FileHolds(copy, secret)) << secret;
  }
  EXPECT_TRUE(FileHolds(copy, "/home/user/venv/lib/python3.11/site-packages/torch/lib/"));
  EXPECT_TRUE(FileHolds(copy, "gemm_kernel_128x128"));
  EXPECT_EQ(Check(copy, original), 0);
  EXPECT_EQ(Check(original, original), 1);
  fs::remove(original);
  fs::remove(copy);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// Found on nsys 2025.3 exports of an H200 run: a 2-letter host name in TARGET_INFO_SYSTEM_ENV
// (too short to search for elsewhere, but not to keep) and whole environments NUL-joined in
// StringIds that no table refers to.
TEST(RedactLeaks, ShortHostAndNulJoinedEnvironmentBlocks) {
  const std::string original =
      PlantedExport("short_host.sqlite",
                    "UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'vm' WHERE name = 'Hostname';"
                    "INSERT INTO StringIds VALUES (100001, CAST("
                    "  'HOME=/root' || char(0) || 'SECRET_THING=nulJoinedSecret0042' || char(0) || "
                    "  'PATH=/usr/bin' AS TEXT));");
  const std::string copy = Redacted(original);
  EXPECT_TRUE(FileHolds(original, "nulJoinedSecret0042"));
  EXPECT_FALSE(FileHolds(copy, "nulJoinedSecret0042"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(copy.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(db, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'", -1,
                         &st, nullptr),
      SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))),
            HostPseudonym("vm"));
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_EQ(Check(copy, original), 0);
  fs::remove(original);
  fs::remove(copy);
}

}  // namespace
}  // namespace sightline
