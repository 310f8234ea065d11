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

// Number options must be finite: CLI11's range checks let "nan" through, and --fail-if-slower nan
// was a gate that could never fail.
TEST(Cli, NumberOptionsRefuseNanAndInfinity) {
  const std::string trace =
      std::string(" '") + SIGHTLINE_SOURCE_DIR + "/tests/data/kineto/basic.json'";
  for (const std::string& args :
       {"diff --fail-if-slower nan" + trace + trace, "diff --fail-if-slower inf" + trace + trace,
        "diff --min-share nan" + trace + trace, "analyze --min-gap-us nan" + trace,
        "analyze --min-gap-us -inf" + trace,
        std::string("allreduce tune --noise-pct nan x.csv -o y.h")}) {
    testing::CliResult r = RunSightline(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find("number"), std::string::npos) << args << ": " << r.err;
  }
  // Taken: the trace has one iteration, too few for the verdict to tell (exit 4, not 2).
  EXPECT_EQ(RunSightline("diff --fail-if-slower 5" + trace + trace).exit_code, 4);
}

// A number out of its option's range is refused by the option's name with the range in words
// (CLI11's own checks printed "not in range 0.000000 to " and 309 digits), and a value that
// cannot be converted to the program's units is refused before it is: --min-gap-us 1e308 was
// turned into nanoseconds past int64 and reported as "min_gap_ns must not be negative".
TEST(Cli, NumberOptionsSayTheirRangeByName) {
  const std::string trace =
      std::string(" '") + SIGHTLINE_SOURCE_DIR + "/tests/data/kineto/basic.json'";
  const struct {
    std::string args;
    const char* says;
  } cases[] = {
      {"analyze --top 0" + trace, "--top: '0' is out of range: 1 to 2147483647"},
      {"analyze --top 99999999999" + trace, "--top: '99999999999' is out of range"},
      {"analyze --jobs -1" + trace, "--jobs: '-1' is out of range: 1 to"},
      {"analyze --min-gap-us 1e308" + trace,
       "--min-gap-us: '1e308' is out of range: 0 to 4.6e15 (2^62 ns"},
      {"diff --top 0" + trace + trace, "--top: '0' is out of range"},
      {"diff --fail-if-slower -1" + trace + trace,
       "--fail-if-slower: '-1' is out of range: 0 or more"},
      {"diff --min-share 101" + trace + trace, "--min-share: '101' is out of range: 0 to 100"},
      {"ncu --top 0 x.csv", "--top: '0' is out of range"},
      {"occupancy --arch h100 --block-size 128 --registers 32 --grid 0",
       "--grid: '0' is out of range: 1 to 9223372036854775807"},
      {"allreduce tune --noise-pct 1e300 x.csv -o y.h",
       "--noise-pct: '1e300' is out of range: 0 to 100"},
  };
  for (const auto& c : cases) {
    testing::CliResult r = RunSightline(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(r.err.find("0.000000"), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
  // The largest gap a trace can hold is taken.
  EXPECT_EQ(RunSightline("analyze --min-gap-us 4.6e15" + trace).exit_code, 0);
}

// --ranks-per-host: a positive count, else a usage error; given, the ranks section says the hosts
// came from it (the same sample twice: ranks 0 and 1 by order, on hosts 0 and 1).
// A bad --iterations regex is refused when the command line is read, before any input is: the
// input here does not exist, and the error is the regex's, for every command that takes it.
TEST(Cli, BadIterationsRegexIsRefusedBeforeAnyInput) {
  const std::string missing = "/nonexistent/trace.sqlite";
  for (const std::string& cmd :
       {"analyze " + missing, "export --perfetto -o /tmp/never.json " + missing,
        "diff " + missing + " " + missing, "baseline save /tmp/never.baseline.json " + missing}) {
    const testing::CliResult r = RunSightline(cmd + " --iterations '(a'");
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find("--iterations: iterations regex '(a' is not a valid regular expression"),
              std::string::npos)
        << cmd << ": " << r.err;
    EXPECT_EQ(r.err.find("nonexistent"), std::string::npos) << cmd << ": " << r.err;
  }
}

TEST(Cli, RanksPerHost) {
  const std::string sample =
      "'" + std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/llama_decode_h100.nsys.sqlite'";
  for (const char* bad : {"0", "-2", "two"}) {
    testing::CliResult r =
        RunSightline(std::string("analyze --ranks-per-host ") + bad + " " + sample + " " + sample);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--ranks-per-host"), std::string::npos) << r.err;
  }
  testing::CliResult r = RunSightline("analyze --format json --ranks-only --ranks-per-host 1 " +
                                      sample + " " + sample);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"host_source\": \"--ranks-per-host\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"hosts\": 2"), std::string::npos);
  testing::CliResult none =
      RunSightline("analyze --format json --ranks-only " + sample + " " + sample);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  // The sample names its host ("vm") in the export: both ranks on it.
  EXPECT_NE(none.out.find("\"host_source\": \"trace\""), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("\"hosts\": 1"), std::string::npos);
}

// Above 16 ranks, a multi-rank report keeps only the ranks section (and says so) unless
// --all-rank-sections; up to 16 every rank keeps its sections; --ranks-only and
// --all-rank-sections together are a usage error.
TEST(Cli, RankSectionsLeftOutAboveSixteenRanks) {
  const std::string sample =
      "'" + std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/llama_decode_h100.nsys.sqlite'";
  auto files = [&sample](int n) {
    std::string list;
    for (int i = 0; i < n; ++i) list += " " + sample;
    return list;
  };
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  testing::CliResult big = RunSightline("analyze --format json -q" + files(17));
  ASSERT_EQ(big.exit_code, 0) << big.err;
  EXPECT_EQ(count(big.out, "\"key\": \"overview\""), 0u);
  EXPECT_GE(count(big.out, "\"key\": \"ranks\""), 1u);
  EXPECT_EQ(count(big.out, "17 ranks: only the ranks section"), 1u);
  testing::CliResult all = RunSightline("analyze --format json -q --all-rank-sections" + files(17));
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(count(all.out, "\"key\": \"overview\""), 17u);
  EXPECT_EQ(all.out.find("17 ranks: only the ranks section"), std::string::npos);
  testing::CliResult small = RunSightline("analyze --format json -q" + files(3));
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_EQ(count(small.out, "\"key\": \"overview\""), 3u);
  testing::CliResult both = RunSightline("analyze --ranks-only --all-rank-sections" + files(2));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_TRUE(both.out.empty());
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
    ::testing::Values(
        BadInput{"empty.json", "", "empty"},
        BadInput{"text.txt", "hello, this is not a trace\n", "not a format Sightline reads"},
        BadInput{"truncated.json", "{\"traceEvents\": [{\"ph\": \"X\", \"na", "JSON"},
        BadInput{"corrupt.json.gz", std::string("\x1f\x8b\x08\x00garbagegarbage", 18), "gzip"}),
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
  EXPECT_EQ(r.exit_code, 3);  // an output that cannot be written has its own exit code
  EXPECT_NE(r.err.find("/nonexistent-dir/report.txt"), std::string::npos);
}

}  // namespace
}  // namespace sightline
