// End-to-end checks of the diff's verdict: `sightline diff --fail-if-slower` on traces with
// iterations (exit 1 slower, 0 not slower, 4 cannot tell), several runs per side (`A1 A2 -- B1
// B2`, directories), and `sightline baseline save` with `diff --baseline`.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

using testing::RunSightline;

// One complete ("X") event; ts and dur in microseconds.
std::string Event(const char* cat, const std::string& name, int pid, int tid, double ts, double dur,
                  const std::string& args) {
  char times[96];
  std::snprintf(times, sizeof(times), "\"ts\": %.3f, \"dur\": %.3f", ts, dur);
  std::string e = std::string("{\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": \"" + name +
                  "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) +
                  ", " + times;
  if (!args.empty()) e += ", \"args\": {" + args + "}";
  return e + "}";
}

// A PyTorch profiler (Kineto) trace of `steps` ProfilerStep#N ranges. Each step launches a GEMM
// inside an "mlp" range, waits for it in cudaStreamSynchronize and then runs host code; the GEMM
// takes gemm_us, the host code host_us, each times (1 + noise * a normal draw from `seed`).
std::string LoopTrace(int steps, double gemm_us, double host_us, double noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::string events;
  auto add = [&](const std::string& e) {
    if (!events.empty()) events += ",\n";
    events += e;
  };
  double t = 1000;
  for (int i = 0; i < steps; ++i) {
    const double gemm = gemm_us * (1 + noise * z(rng)), host = host_us * (1 + noise * z(rng));
    const double kernel_start = t + 5, kernel_end = kernel_start + gemm;
    const double end = kernel_end + 1 + host;
    const int corr = 100 + i;
    add(Event("user_annotation", "ProfilerStep#" + std::to_string(i), 1, 1, t, end - t, ""));
    add(Event("user_annotation", "mlp", 1, 1, t + 1, 3, ""));
    add(Event("cuda_runtime", "cudaLaunchKernel", 1, 1, t + 2, 1,
              "\"correlation\": " + std::to_string(corr)));
    add(Event("kernel", "ampere_sgemm_128x64_nn", 0, 7, kernel_start, gemm,
              "\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(corr)));
    add(Event("cuda_runtime", "cudaStreamSynchronize", 1, 1, t + 4, kernel_end + 1 - (t + 4), ""));
    t = end + 1;  // a microsecond between steps: float times never make them overlap
  }
  return "{\"schemaVersion\": 1, \"traceEvents\": [\n" + events + "\n]}\n";
}

class CliVerdict : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir(); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  static std::string Read(const std::string& path) { return testing::Slurp(path); }
  // A run of 40 steps: a 100 us GEMM (times `slowdown`) and 20 us of host code, 2% noise.
  std::string Run(const std::string& name, uint64_t seed, double slowdown = 1.0,
                  double noise = 0.02) {
    return Write(name, LoopTrace(40, 100 * slowdown, 20, noise, seed));
  }
  static std::string Q(const std::string& path) { return "'" + path + "'"; }

  std::string dir_;
};

TEST_F(CliVerdict, PlantedSlowdownFailsWithTheSentence) {
  const std::string a = Run("a.json", 1), b = Run("b.json", 2, 1.10);
  testing::CliResult r = RunSightline("diff " + Q(a) + " " + Q(b) + " --fail-if-slower 5");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("Slower: step time +"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("from `mlp` GEMM"), std::string::npos) << r.err;
  // The verdict opens the report.
  const size_t verdict = r.out.find("Verdict");
  ASSERT_NE(verdict, std::string::npos);
  EXPECT_LT(verdict, r.out.find("Diff: candidate against baseline"));
  EXPECT_NE(r.out.find("In one sentence"), std::string::npos);
  EXPECT_NE(r.out.find("median step time (verdict)"), std::string::npos);
}

TEST_F(CliVerdict, SameProgramPasses) {
  const std::string a = Run("a.json", 3), b = Run("b.json", 4);
  testing::CliResult r = RunSightline("diff " + Q(a) + " " + Q(b) + " --fail-if-slower 5");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out.substr(0, 3000);
  EXPECT_NE(r.out.find("not_slower"), std::string::npos);
}

TEST_F(CliVerdict, StraddlingCannotTellExitsFour) {
  const std::string a = Write("a.json", LoopTrace(12, 100, 20, 0.10, 5));
  const std::string b = Write("b.json", LoopTrace(12, 106, 20, 0.10, 6));
  testing::CliResult r =
      RunSightline("diff " + Q(a) + " " + Q(b) + " --fail-if-slower 5 --format json");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("Cannot tell"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("iterations per side would likely decide"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("\"decision\": \"cannot_tell\""), std::string::npos);
  EXPECT_NE(r.out.find("\"iterations_to_decide\""), std::string::npos);
}

TEST_F(CliVerdict, SeveralRunsPerSideAndDirectories) {
  const std::vector<std::string> a = {Run("a/1.json", 11), Run("a/2.json", 12)};
  const std::vector<std::string> b = {Run("b/1.json", 13, 1.10), Run("b/2.json", 14, 1.10)};
  testing::CliResult r = RunSightline("diff --fail-if-slower 5 --format json " + Q(a[0]) + " " +
                                      Q(a[1]) + " -- " + Q(b[0]) + " " + Q(b[1]));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("\"runs_before\": 2"), std::string::npos);
  EXPECT_NE(r.out.find("\"runs_after\": 2"), std::string::npos);
  // The same runs as a directory per side.
  testing::CliResult d = RunSightline("diff --fail-if-slower 5 --format json " + Q(dir_ + "/a") +
                                      " " + Q(dir_ + "/b"));
  EXPECT_EQ(d.exit_code, 1) << d.err;
  EXPECT_EQ(d.out.substr(d.out.find("\"diff_verdict\"")).substr(0, 2000),
            r.out.substr(r.out.find("\"diff_verdict\"")).substr(0, 2000));
}

TEST_F(CliVerdict, SavedBaselineGivesTheSameVerdict) {
  const std::string a1 = Run("a1.json", 21), a2 = Run("a2.json", 22);
  const std::string b = Run("b.json", 23, 1.10);
  const std::string saved = dir_ + "/main.baseline.json";
  testing::CliResult s = RunSightline("baseline save " + Q(saved) + " " + Q(a1) + " " + Q(a2));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string text = Read(saved);
  EXPECT_NE(text.find("\"format\": \"sightline-baseline\""), std::string::npos);
  EXPECT_NE(text.find("\"format_version\": 1"), std::string::npos);
  EXPECT_LT(text.size(), Read(a1).size());  // figures, not the trace

  testing::CliResult direct =
      RunSightline("diff --fail-if-slower 5 --format json " + Q(a1) + " " + Q(a2) + " -- " + Q(b));
  testing::CliResult from_saved =
      RunSightline("diff --fail-if-slower 5 --format json --baseline " + Q(saved) + " " + Q(b));
  EXPECT_EQ(from_saved.exit_code, 1) << from_saved.err;
  EXPECT_EQ(direct.exit_code, 1) << direct.err;
  auto summary = [](const std::string& out) {
    const size_t at = out.find("\"summary\"");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_FALSE(summary(direct.out).empty());
  EXPECT_EQ(summary(from_saved.out), summary(direct.out));

  // The saved baseline in a trace's place is the same diff.
  testing::CliResult positional =
      RunSightline("diff --fail-if-slower 5 --format json " + Q(saved) + " " + Q(b));
  EXPECT_EQ(positional.exit_code, 1) << positional.err;
  EXPECT_EQ(summary(positional.out), summary(direct.out));

  // Two saved baselines compare without their traces: the candidate's runs saved too.
  const std::string saved_b = dir_ + "/candidate.baseline.json";
  ASSERT_EQ(RunSightline("baseline save " + Q(saved_b) + " " + Q(b)).exit_code, 0);
  testing::CliResult both =
      RunSightline("diff --fail-if-slower 5 --format json " + Q(saved) + " -- " + Q(saved_b));
  EXPECT_EQ(both.exit_code, 1) << both.err;
  EXPECT_EQ(summary(both.out), summary(direct.out));
  EXPECT_NE(both.out.find("\"runs_before\": 2"), std::string::npos);
  // A trace without iterations beside a saved baseline: exit 2, and what to do.
  const std::string flat = Write("flat.json",
                                 "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": "
                                 "\"kernel\", \"name\": \"k\", \"pid\": 0, "
                                 "\"tid\": 7, \"ts\": 1, \"dur\": 2}]}");
  testing::CliResult no_iter = RunSightline("diff " + Q(saved) + " " + Q(flat));
  EXPECT_EQ(no_iter.exit_code, 2) << no_iter.err;
  EXPECT_NE(no_iter.err.find("--iterations"), std::string::npos) << no_iter.err;
}

// Real unchanged runs (tests/data/verdict/README.md): three against three is not called slower
// where resampling the runs alone did; one against one shows the one-run false alarm, with its
// note.
TEST_F(CliVerdict, RealUnchangedRunsOfAnH200) {
  auto run = [](int k) {
    return Q(fmt::format("{}/tests/data/verdict/h200_unchanged_run_{:02d}.baseline.json",
                         SIGHTLINE_SOURCE_DIR, k));
  };
  testing::CliResult three =
      RunSightline(fmt::format("diff --fail-if-slower 0 --format json {} {} {} -- {} {} {}",
                               run(20), run(30), run(46), run(9), run(21), run(24)));
  EXPECT_EQ(three.exit_code, 4) << three.err;
  EXPECT_NE(three.out.find("spread between the 3 + 3 runs"), std::string::npos);
  testing::CliResult one =
      RunSightline("diff --fail-if-slower 1 --format json " + run(15) + " -- " + run(16));
  EXPECT_EQ(one.exit_code, 1) << one.err;
  EXPECT_NE(one.out.find("one run on a side"), std::string::npos);
}

TEST_F(CliVerdict, BadInputExitsTwoAndWritesNothing) {
  const std::string a = Run("a.json", 31), b = Run("b.json", 32);
  const std::string before = Read(a);
  const std::string notes = Write("notes.json", "{\"format\": \"something else\"}");
  const std::string out = dir_ + "/out.txt";
  const std::vector<std::string> cases = {
      "baseline save " + Q(a) + " " + Q(a),                          // would replace its input
      "diff --baseline " + Q(notes) + " " + Q(b) + " -o " + Q(out),  // not a baseline
      "diff --baseline " + Q(a) + " -o " + Q(out),                   // no candidate
      "diff " + Q(a) + " -- -o " + Q(out),                           // nothing after --
      "diff " + Q(a) + " " + Q(b) + " --fail-if-slower nan -o " + Q(out),
      "diff " + Q(a) + " " + Q(b) + " " + Q(b) + " -o " + Q(out),  // three, no --
  };
  for (const std::string& args : cases) {
    testing::CliResult r = RunSightline(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
  EXPECT_EQ(Read(a), before);
  // A trace without iterations cannot be saved as a baseline.
  const std::string flat =
      Write("flat.json",
            "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
            "\"tid\": 7, \"ts\": 1, \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7}}]}");
  testing::CliResult r = RunSightline("baseline save " + Q(dir_ + "/x.json") + " " + Q(flat));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no iterations"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/x.json"));
}

}  // namespace
}  // namespace sightline
