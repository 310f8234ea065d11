// `sightline record` without a GPU: the program's exit code, signals and environment pass through,
// a program that never uses CUDA gives a note and no file, and bad options, a missing program or an
// unwritable output directory are clear errors.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "testing/cli_runner.h"

namespace sightline {
namespace {

using testing::CliResult;
using testing::RunSightline;

class RecordCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    // These programs never load CUDA, so any readable file stands in for the injection library
    // (the real one may not be built where these tests run).
    const std::string lib = dir_ + "/libsightline_recorder.so";
    std::ofstream(lib) << "not loaded";
    setenv("SIGHTLINE_RECORDER_LIB", lib.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("SIGHTLINE_RECORDER_LIB");
    std::filesystem::remove_all(dir_);
  }
  std::string Out() const { return "-o '" + dir_ + "/r-%p.slrec' "; }

  std::string dir_;
};

TEST_F(RecordCommand, ProgramWithoutCudaGivesNoteAndExitZero) {
  CliResult r = RunSightline("record " + Out() + "-- /bin/true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("never initialised CUDA"), std::string::npos) << r.err;
  // No recording; only the process tree beside where it would have been.
  int trees = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 15 && name.substr(name.size() - 15) == ".processes.json") {
      ++trees;
      continue;
    }
    EXPECT_EQ(e.path().extension(), ".so") << "unexpected file " << e.path();
  }
  EXPECT_EQ(trees, 1);
  EXPECT_NE(r.err.find("1 process (tree and CPU time in"), std::string::npos) << r.err;
}

// Every process the program starts is in the run's process tree, CUDA or not: a shell that
// starts two children, each with its parent, command, start and end on the launcher's clock.
TEST_F(RecordCommand, ProcessTreeOfTheRunIsWritten) {
  CliResult r = RunSightline("record -o '" + dir_ +
                             "/run.slrec' -- sh -c 'sleep 0.4 & sleep 0.5; wait; exit 3'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("3 processes (tree and CPU time in " + dir_ + "/run.processes.json)"),
            std::string::npos)
      << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(dir_ + "/run.processes.json").get(doc), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(doc["sightline_processes"]), 1);
  const int64_t run_start = doc["start_ns"], run_end = doc["end_ns"];
  simdjson::dom::array procs = doc["processes"];
  ASSERT_EQ(procs.size(), 3u);
  const int64_t root = procs.at(0)["pid"];
  EXPECT_EQ(std::string_view(procs.at(0)["name"]), "sh");
  int sleeps = 0;
  for (simdjson::dom::element p : procs) {
    const int64_t start = p["start_ns"], end = p["end_ns"];
    EXPECT_LE(run_start - 20'000'000, start);  // /proc's start times are in 10 ms ticks
    EXPECT_LT(start, end);
    EXPECT_LE(end, run_end);
    if (std::string_view(p["name"]) == "sleep") {
      ++sleeps;
      EXPECT_EQ(int64_t(p["ppid"]), root);
      EXPECT_NE(std::string_view(p["command"]).find("sleep 0."), std::string_view::npos);
      // Lived about as long as it slept (ends are seen at the next 20 ms scan).
      EXPECT_GE(end - start, 300'000'000);
    }
  }
  EXPECT_EQ(sleeps, 2);
}

// SIGHTLINE_RECORD_WATCH=0 (diagnostic: what the /proc scans cost) leaves the children out, but
// the tree still holds the program with its start and end, and the run its own.
TEST_F(RecordCommand, UnwatchedRunKeepsTheProgramAlone) {
  setenv("SIGHTLINE_RECORD_WATCH", "0", 1);
  CliResult r = RunSightline("record -o '" + dir_ + "/run.slrec' -- sh -c 'sleep 0.2 & wait'");
  unsetenv("SIGHTLINE_RECORD_WATCH");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(dir_ + "/run.processes.json").get(doc), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(doc["scans"]), 0);
  const int64_t run_start = doc["start_ns"], run_end = doc["end_ns"];
  EXPECT_GE(run_end - run_start, 150'000'000);
  simdjson::dom::array procs = doc["processes"];
  ASSERT_EQ(procs.size(), 1u);
  const int64_t end = procs.at(0)["end_ns"];
  EXPECT_GT(end, run_start);
  EXPECT_LE(end, run_end);
}

TEST_F(RecordCommand, ExitCodeAndOutputPassThrough) {
  CliResult r = RunSightline("record " + Out() + "-- sh -c 'echo hello; exit 7'");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "hello\n");
  // After `--` options that look like sightline's are the program's.
  EXPECT_EQ(RunSightline("record " + Out() + "-- sh -c 'exit 3' -o x").exit_code, 3);
  // Without `--` they are sightline's, and unknown ones are a usage error.
  EXPECT_EQ(RunSightline("record " + Out() + "sh -c 'exit 3'").exit_code, 2);
}

TEST_F(RecordCommand, SignalBecomes128PlusSignal) {
  EXPECT_EQ(RunSightline("record " + Out() + "-- sh -c 'kill -TERM $$'").exit_code, 128 + 15);
}

TEST_F(RecordCommand, EnvironmentIsKeptAndInjectionIsSet) {
  setenv("SIGHTLINE_TEST_VALUE", "kept", 1);
  CliResult r = RunSightline(
      "record --capture-range cudaProfilerApi --capture-range-end repeat:2 " + Out() +
      "-- sh -c 'test \"$SIGHTLINE_TEST_VALUE\" = kept && test -z \"$GLIBC_TUNABLES\" && "
      "test -n \"$CUDA_INJECTION64_PATH\" && test -n \"$NVTX_INJECTION64_PATH\" && "
      "test \"$SIGHTLINE_RECORD_CAPTURE_RANGE\" = cudaProfilerApi && "
      "test \"$SIGHTLINE_RECORD_CAPTURE_RANGE_END\" = repeat:2'");
  unsetenv("SIGHTLINE_TEST_VALUE");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// --cuda-graph-trace sampled:N reaches the library as given (it parses it again there).
TEST_F(RecordCommand, SampledGraphTraceIsPassedOn) {
  CliResult r = RunSightline("record --cuda-graph-trace sampled:10 " + Out() +
                             "-- sh -c 'test \"$SIGHTLINE_RECORD_GRAPH_TRACE\" = sampled:10'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(RecordCommand, MissingProgramIs127) {
  CliResult r = RunSightline("record " + Out() + "-- /nonexistent/program --flag");
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("/nonexistent/program"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("command not found"), std::string::npos) << r.err;
}

TEST_F(RecordCommand, BadOptionsAreUsageErrors) {
  for (const char* bad :
       {"--capture-range sometimes -- /bin/true", "--capture-range-end repeat:0 -- /bin/true",
        "--capture-range-end forever -- /bin/true", "--ranks 1,x -- /bin/true",
        "--buffer-size 3 -- /bin/true", "--buffer-size lots -- /bin/true",
        "--cuda-graph-trace nodes -- /bin/true", "--cuda-graph-trace sampled:1 -- /bin/true",
        "--cuda-graph-trace sampled:x -- /bin/true", "--cuda-graph-trace sampled: -- /bin/true",
        "--cuda-graph-trace sampled:99999999 -- /bin/true", ""}) {
    CliResult r = RunSightline(std::string("record ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_FALSE(r.err.empty()) << bad;
  }
}

TEST_F(RecordCommand, UnwritableOutputDirectoryFailsBeforeStarting) {
  const std::string marker = dir_ + "/ran";
  CliResult r = RunSightline("record -o /nonexistent/dir/r.slrec -- touch '" + marker + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/dir"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the program must not have started";
}

TEST_F(RecordCommand, UnselectedRankRunsWithoutInjection) {
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  CliResult r = RunSightline("record --ranks 1 " + Out() +
                             "-- sh -c 'test -z \"$CUDA_INJECTION64_PATH\" && exit 5'");
  unsetenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(r.err.find("sightline record:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sightline
