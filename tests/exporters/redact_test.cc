// sightline redact: the copy keeps every figure (its report equals the original's) and loses the
// machine's identity; every export and recording the project ships is such a copy.
#include "exporters/redact.h"

#include <gtest/gtest.h>
#include <libdeflate.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "base/file_io.h"
#include "base/input_data.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;

const std::string kRoot = SIGHTLINE_SOURCE_DIR;

std::string TempPath(const std::string& name) {
  return (fs::temp_directory_path() /
          ("sightline_redact_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// What a file still holds of a machine's identity, one line per kind ("" when nothing).
std::string IdentityIn(const std::string& path) {
  std::string found;
  if (path.ends_with(".slrec")) {
    StatusOr<std::string> bytes = ReadInput(path);
    if (!bytes.ok()) return "";
    std::set<uint32_t> hosts;
    std::map<uint32_t, std::string> strings;
    recfmt::ReadSummary summary;
    recfmt::ReadRecords(*bytes, &summary, [&](recfmt::RecordType type, std::string_view body) {
      if (type == recfmt::RecordType::kProcess) {
        hosts.insert(recfmt::DecodeBody<recfmt::ProcessBody>(body).hostname_string);
      }
      uint32_t id = 0;
      std::string_view text;
      if (type == recfmt::RecordType::kString && recfmt::DecodeString(body, &id, &text)) {
        strings[id] = std::string(text);
      }
    });
    static const std::regex kPseudonym("host-[0-9a-f]{8}");
    for (uint32_t h : hosts) {
      if (h != recfmt::kNoString && !std::regex_match(strings[h], kPseudonym)) {
        found += "host name " + strings[h] + "\n";
      }
    }
    return found;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(db);
    return "";
  }
  auto count = [&](const char* what, const char* sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
      found += std::string(what) + ": " + std::to_string(sqlite3_column_int64(st, 0)) + "\n";
    }
    sqlite3_finalize(st);
  };
  count("capture environment",
        "SELECT count(*) FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE%'");
  count("device environment",
        "SELECT count(*) FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment' AND value "
        "<> ''");
  count("host name",
        "SELECT count(*) FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' AND value NOT GLOB "
        "'host-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'");
  count("environment strings",
        "SELECT count(*) FROM StringIds WHERE value GLOB '[A-Z_]*=?*' AND substr(value, 1, "
        "instr(value, '=') - 1) NOT GLOB '*[^A-Z0-9_]*'");
  count("user folders",
        "SELECT count(*) FROM StringIds WHERE value GLOB '*/home/*' AND value NOT "
        "GLOB '*/home/user*'");
  sqlite3_close_v2(db);
  return found;
}

std::string ReportWithoutPaths(const std::string& path) {
  testing::CliResult r = testing::RunSightline("analyze --format json '" + path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  static const std::regex kNames("\"(path|label)\": \"[^\"]*\"");
  return std::regex_replace(r.out, kNames, "");
}

TEST(Redact, NsysCopyKeepsTheReportAndLosesTheEnvironment) {
  // An export with its environment, host and user, as nsys wrote it: a shipped one is already
  // redacted, so the environment is put back first.
  const std::string original = TempPath("with_env.sqlite");
  fs::copy_file(kRoot + "/examples/samples/llama_decode_h100.nsys.sqlite", original,
                fs::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(original.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO META_DATA_CAPTURE VALUES "
                         "('PROCESS_0:ENVIRONMENT_VARIABLE', 'HF_TOKEN=\"hf_secret\"');"
                         "UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'HOME=/home/alice;SECRET=1' "
                         "WHERE name = 'DeviceEnvironment';"
                         "UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'gpu-node-17' WHERE name = "
                         "'Hostname';"
                         "INSERT INTO StringIds VALUES (1000000, 'AWS_SECRET_ACCESS_KEY=abc');"
                         "INSERT INTO StringIds VALUES (1000001, '/home/alice/venv/lib/torch.py');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ASSERT_NE(IdentityIn(original), "");

  const std::string copy = TempPath("redacted.sqlite");
  StatusOr<RedactSummary> sum = RedactFile(original, copy);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(IdentityIn(copy), "");
  EXPECT_GE(sum->environment_values, 4);  // the capture's, the two of the list, the string
  EXPECT_GE(sum->host_names, 1);
  EXPECT_GE(sum->user_names, 1);
  StatusOr<std::string> bytes = ReadFileToString(copy);
  ASSERT_TRUE(bytes.ok());
  for (const char* secret : {"hf_secret", "alice", "gpu-node-17", "SECRET=1", "=abc"}) {
    EXPECT_EQ(bytes->find(secret), std::string::npos) << secret;  // not even in free pages
  }
  EXPECT_EQ(ReportWithoutPaths(original), ReportWithoutPaths(copy));
  // The output is never the input.
  testing::CliResult same = testing::RunSightline("redact '" + copy + "' -o '" + copy + "'");
  EXPECT_EQ(same.exit_code, 2);
  fs::remove(original);
  fs::remove(copy);
}

TEST(Redact, RecordingAndCompressedExport) {
  const std::string copy = TempPath("rec.slrec");
  testing::CliResult r = testing::RunSightline(
      "redact '" + kRoot + "/tests/data/recorder/recorder_test_app_h100.slrec' -o '" + copy + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(IdentityIn(copy), "");
  EXPECT_EQ(ReportWithoutPaths(kRoot + "/tests/data/recorder/recorder_test_app_h100.slrec"),
            ReportWithoutPaths(copy));
  // A gzip'd export gives a plain copy with the same report.
  StatusOr<std::string> plain =
      ReadFileToString(kRoot + "/examples/samples/host_loop_h100.nsys.sqlite");
  ASSERT_TRUE(plain.ok());
  libdeflate_compressor* c = libdeflate_alloc_compressor(1);
  std::string gz(libdeflate_gzip_compress_bound(c, plain->size()), '\0');
  gz.resize(libdeflate_gzip_compress(c, plain->data(), plain->size(), gz.data(), gz.size()));
  libdeflate_free_compressor(c);
  const std::string gz_path = TempPath("export.sqlite.gz");
  std::ofstream(gz_path, std::ios::binary)
      .write(gz.data(), static_cast<std::streamsize>(gz.size()));
  const std::string gz_copy = TempPath("export_copy.sqlite");
  StatusOr<RedactSummary> sum = RedactFile(gz_path, gz_copy);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(ReportWithoutPaths(gz_path), ReportWithoutPaths(gz_copy));
  fs::remove(gz_path);
  fs::remove(gz_copy);
  // A kind that carries no machine identity is refused, saying what redact reads.
  testing::CliResult json = testing::RunSightline(
      "redact '" + kRoot + "/tests/data/serving/vllm_detailed_small.json' -o '" + copy + "'");
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_NE(json.err.find("redact copies Nsight Systems SQLite exports and Sightline recordings"),
            std::string::npos)
      << json.err;
  fs::remove(copy);
}

// The command's errors: what is wrong, exit 2, and no output left behind.
TEST(Redact, UsageAndInputErrorsLeaveNoOutput) {
  const std::string copy = TempPath("never_written.sqlite");
  const std::string export_path = kRoot + "/examples/samples/host_loop_h100.nsys.sqlite";
  testing::CliResult no_against = testing::RunSightline("redact --check '" + export_path + "'");
  EXPECT_EQ(no_against.exit_code, 2);
  EXPECT_NE(no_against.err.find("needs --against ORIGINAL"), std::string::npos) << no_against.err;
  testing::CliResult no_output = testing::RunSightline("redact '" + export_path + "'");
  EXPECT_EQ(no_output.exit_code, 2);
  EXPECT_NE(no_output.err.find("name the copy with -o FILE"), std::string::npos) << no_output.err;
  testing::CliResult both =
      testing::RunSightline("redact '" + export_path + "' -o '" + copy + "' --check '" +
                            export_path + "' --against '" + export_path + "'");
  EXPECT_EQ(both.exit_code, 2);
  // A truncated export: a clear error naming the file, and no copy.
  StatusOr<std::string> bytes = ReadFileToString(export_path);
  ASSERT_TRUE(bytes.ok());
  const std::string cut = TempPath("cut.sqlite");
  std::ofstream(cut, std::ios::binary).write(bytes->data(), 8192);
  testing::CliResult truncated = testing::RunSightline("redact '" + cut + "' -o '" + copy + "'");
  EXPECT_EQ(truncated.exit_code, 2);
  EXPECT_NE(truncated.err.find(cut), std::string::npos) << truncated.err;
  EXPECT_FALSE(fs::exists(copy));
  // The check of a clean copy says so and exits 0; the original against itself exits 1.
  testing::CliResult made = testing::RunSightline("redact '" + export_path + "' -o '" + copy + "'");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  testing::CliResult clean =
      testing::RunSightline("redact --check '" + copy + "' --against '" + export_path + "'");
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_NE(clean.err.find("holds none of the"), std::string::npos) << clean.err;
  fs::remove(cut);
  fs::remove(copy);
}

// Every export and recording the project ships was redacted (scripts: sightline redact).
TEST(Redact, ShippedFilesHoldNoIdentity) {
  int looked = 0;
  for (const char* dir : {"examples", "tests/data", "docs/evidence"}) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(kRoot + "/" + dir)) {
      std::string p = e.path().string();
      const bool compressed = p.ends_with(".sqlite.gz") || p.ends_with(".sqlite.zst");
      if (!e.is_regular_file() ||
          !(p.ends_with(".sqlite") || p.ends_with(".slrec") || compressed)) {
        continue;
      }
      ++looked;
      std::string checked = p;
      if (compressed) {  // inflated into a temporary to be opened
        StatusOr<std::string> bytes = ReadInput(p);
        ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
        checked = TempPath("shipped.sqlite");
        std::ofstream(checked, std::ios::binary)
            .write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
      }
      EXPECT_EQ(IdentityIn(checked), "") << p << " holds the capturing machine's identity: run "
                                         << "`sightline redact` on it before shipping it";
      if (compressed) fs::remove(checked);
    }
  }
  EXPECT_GE(looked, 10);
}

}  // namespace
}  // namespace sightline
