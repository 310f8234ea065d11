// End-to-end checks of the sightline binary: help, version, and bad input handling (clear message,
// exit code 2, no partial output file).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/cli_runner.h"

namespace sightline {
namespace {

using testing::RunSightline;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Cli, VersionAndHelp) {
  EXPECT_EQ(RunSightline("--version").exit_code, 0);
  testing::CliResult help = RunSightline("analyze --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--format"), std::string::npos);
  EXPECT_NE(help.out.find("--iterations"), std::string::npos);
}

// --no-findings drops the findings and keeps the sections.
TEST(Cli, NoFindingsLeavesOutFindingsOnly) {
  const std::string sample =
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/llama_decode_h100.nsys.sqlite";
  testing::CliResult with = RunSightline("analyze --format json '" + sample + "'");
  testing::CliResult without = RunSightline("analyze --no-findings --format json '" + sample + "'");
  ASSERT_EQ(with.exit_code, 0) << with.err;
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(with.out.find("\"estimated_savings_ns\""), std::string::npos);
  EXPECT_EQ(without.out.find("\"estimated_savings_ns\""), std::string::npos);
  EXPECT_NE(without.out.find("\"kernel_summary\""), std::string::npos);
}

TEST(Cli, BadOptionIsUsageError) {
  testing::CliResult r = RunSightline("analyze --format xml x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("format"), std::string::npos);
  EXPECT_EQ(RunSightline("frobnicate").exit_code, 2);
}

struct BadInput {
  const char* name;
  std::string bytes;
  const char* expect;  // a word the message must contain
};

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, ClearErrorExitTwoNoOutput) {
  const BadInput& c = GetParam();
  const std::string dir = testing::MakeTempDir();
  const std::string input = dir + "/" + c.name;
  WriteFile(input, c.bytes);
  const std::string output = dir + "/report.json";
  testing::CliResult r = RunSightline("analyze --format json -o '" + output + "' '" + input + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(input), std::string::npos) << "message must name the file: " << r.err;
  EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(output));
  EXPECT_FALSE(std::filesystem::exists(output + ".tmp"));
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, CliBadInput,
    ::testing::Values(BadInput{"empty.json", "", "empty"},
                      BadInput{"text.txt", "hello, this is not a trace\n", "not a trace format"},
                      BadInput{"truncated.json", "{\"traceEvents\": [{\"ph\": \"X\", \"na", "JSON"},
                      BadInput{"corrupt.json.gz", std::string("\x1f\x8b\x08\x00garbagegarbage", 18),
                               "gzip"}),
    [](const ::testing::TestParamInfo<BadInput>& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

TEST(Cli, MissingFile) {
  testing::CliResult r = RunSightline("analyze /nonexistent/trace.sqlite");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/trace.sqlite"), std::string::npos);
  EXPECT_NE(r.err.find("no such file"), std::string::npos);
}

TEST(Cli, DirectoryIsNotATrace) {
  const std::string dir = testing::MakeTempDir();
  testing::CliResult r = RunSightline("analyze '" + dir + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("directory"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Cli, UnwritableOutputLeavesNothing) {
  testing::CliResult r =
      RunSightline(std::string("analyze -o /nonexistent-dir/report.txt '") + SIGHTLINE_SOURCE_DIR +
                   "/examples/samples/llama_decode_h100.pytorch.json.gz'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent-dir/report.txt"), std::string::npos);
}

}  // namespace
}  // namespace sightline
