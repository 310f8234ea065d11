// End-to-end checks of the diff's verdict: `sightline diff --fail-if-slower` on traces with
// iterations (exit 1 slower, 0 not slower, 4 cannot tell), several runs per side (`A1 A2 -- B1
// B2`, directories), and `sightline baseline save` with `diff --baseline`.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
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

// One loop of a trace: `steps` ranges named `name` + N. Each step launches a GEMM inside an "mlp"
// range, waits for it in cudaStreamSynchronize and then runs host code; the GEMM takes gemm_us,
// the host code host_us, each times (1 + noise * a normal draw); host_noise < 0: `noise`.
struct Loop {
  std::string name = "ProfilerStep#";
  int steps = 40;
  double gemm_us = 100, host_us = 20, noise = 0.02, host_noise = -1;
};

// A PyTorch profiler (Kineto) trace of the loops, one after the other, draws from `seed`.
std::string LoopsTrace(const std::vector<Loop>& loops, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::string events;
  auto add = [&](const std::string& e) {
    if (!events.empty()) events += ",\n";
    events += e;
  };
  double t = 1000;
  int corr = 100;
  for (const Loop& loop : loops) {
    const double host_noise = loop.host_noise < 0 ? loop.noise : loop.host_noise;
    for (int i = 0; i < loop.steps; ++i, ++corr) {
      const double gemm = loop.gemm_us * (1 + loop.noise * z(rng));
      const double host = std::max(1.0, loop.host_us * (1 + host_noise * z(rng)));
      const double kernel_start = t + 5, kernel_end = kernel_start + gemm;
      const double end = kernel_end + 1 + host;
      add(Event("user_annotation", loop.name + std::to_string(i), 1, 1, t, end - t, ""));
      add(Event("user_annotation", "mlp", 1, 1, t + 1, 3, ""));
      add(Event("cuda_runtime", "cudaLaunchKernel", 1, 1, t + 2, 1,
                "\"correlation\": " + std::to_string(corr)));
      add(Event("kernel", "ampere_sgemm_128x64_nn", 0, 7, kernel_start, gemm,
                "\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(corr)));
      add(Event("cuda_runtime", "cudaStreamSynchronize", 1, 1, t + 4, kernel_end + 1 - (t + 4),
                ""));
      t = end + 1;  // a microsecond between steps: float times never make them overlap
    }
  }
  return "{\"schemaVersion\": 1, \"traceEvents\": [\n" + events + "\n]}\n";
}

// `steps` ProfilerStep#N ranges (Loop).
std::string LoopTrace(int steps, double gemm_us, double host_us, double noise, uint64_t seed) {
  return LoopsTrace({{.steps = steps, .gemm_us = gemm_us, .host_us = host_us, .noise = noise}},
                    seed);
}

// The line `sightline diff` prints on stderr names first the statistic that decided, and the
// gate section's "Decided by" names that statistic with its interval and the threshold.
void ExpectFirstLineNamesWhatDecided(const testing::CliResult& r, const std::string& decision,
                                     const std::string& statistic, double threshold_pct) {
  const std::string first = "sightline: diff: " + decision + ": " + statistic + " ";
  EXPECT_EQ(r.err.rfind(first, 0), 0u) << "expected " << first << "\n" << r.err;
  const size_t at = r.out.find("Decided by", r.out.find("== Gate (--fail-if-slower)"));
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  const std::string median =
      statistic == "step time" ? "median step time " : "median GPU time launched per step ";
  EXPECT_NE(line.find("verdict: " + median), std::string::npos) << line;
  const char* relation = decision == "Slower"       ? "above"
                         : decision == "Not slower" ? "at or below"
                                                    : "straddle";
  EXPECT_NE(line.find(fmt::format("{} the threshold +{:.1f}%", relation, threshold_pct)),
            std::string::npos)
      << line;
  // The statistic and its interval as the verdict printed them: "+7.0% (95%: +6.9% to +7.1%)".
  EXPECT_NE(line.find("(95%: "), std::string::npos) << line;
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
  // The GEMM is the step: both statistics crossed the threshold, the step time first.
  ExpectFirstLineNamesWhatDecided(r, "Slower", "step time", 5);
  EXPECT_NE(r.out.find("and median GPU time launched per step +"), std::string::npos);
}

// A host-bound loop (GPU busy a tenth of the step) whose host time is noisy and, in the candidate,
// 30% shorter, while its GEMM is 10% slower: the step time is host noise, the GPU time decides.
TEST_F(CliVerdict, HostNoiseLeavesTheDecisionToTheGpuTime) {
  const Loop before = {.gemm_us = 100, .host_us = 900, .noise = 0.01, .host_noise = 0.3};
  Loop after = before;
  after.gemm_us *= 1.10;
  after.host_us *= 0.7;
  const std::string a = Write("a.json", LoopsTrace({before}, 41));
  const std::string b = Write("b.json", LoopsTrace({after}, 42));
  testing::CliResult r = RunSightline("diff " + Q(a) + " " + Q(b) + " --fail-if-slower 5");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ExpectFirstLineNamesWhatDecided(r, "Slower", "GPU time launched", 5);
  EXPECT_NE(r.err.find("step time -"), std::string::npos) << r.err;  // faster, as context
  EXPECT_NE(r.err.find("(host noise here: not gated)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the step time is host noise here: one run on a side"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("no: host noise"), std::string::npos);
  // The other way round the GPU time is 9% faster, and the step time's +43% is not gated.
  testing::CliResult back = RunSightline("diff " + Q(b) + " " + Q(a) + " --fail-if-slower 5");
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_NE(back.out.find("Not slower: GPU time launched -"), std::string::npos);
  // Three runs per side measure the spread between runs: the step time is gated again.
  const std::vector<std::string> as = {a, Write("a2.json", LoopsTrace({before}, 43)),
                                       Write("a3.json", LoopsTrace({before}, 44))};
  const std::vector<std::string> bs = {b, Write("b2.json", LoopsTrace({after}, 45)),
                                       Write("b3.json", LoopsTrace({after}, 46))};
  testing::CliResult three =
      RunSightline(fmt::format("diff --fail-if-slower 5 {} {} {} -- {} {} {}", Q(as[0]), Q(as[1]),
                               Q(as[2]), Q(bs[0]), Q(bs[1]), Q(bs[2])));
  EXPECT_EQ(three.out.find("host noise"), std::string::npos) << three.out.substr(0, 3000);
}

// Two loops in each trace, as a program that replays a CUDA graph (graph_step_N) and runs the
// same step eagerly (eager_step_N, more steps, so the main set): only the graph's GEMM got
// slower. Each loop is compared on its own; the graph loop decides and leads.
TEST_F(CliVerdict, EachLoopIsComparedAndTheOneThatDecidedLeads) {
  const Loop eager = {.name = "eager_step_", .steps = 30, .gemm_us = 100, .host_us = 60};
  const Loop graph = {.name = "graph_step_", .steps = 20, .gemm_us = 100, .host_us = 5};
  Loop slower_graph = graph;
  slower_graph.gemm_us *= 1.10;
  const std::string a = Write("a.json", LoopsTrace({graph, eager}, 51));
  const std::string b = Write("b.json", LoopsTrace({slower_graph, eager}, 52));
  testing::CliResult r = RunSightline("diff " + Q(a) + " " + Q(b) + " --fail-if-slower 5");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ExpectFirstLineNamesWhatDecided(r, "Slower", "step time", 5);
  EXPECT_NE(r.err.find("in `graph_step_N` (median;"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Other loop: `eager_step_N` not slower"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("in `graph_step_N`"), std::string::npos);  // in "Decided by"
  EXPECT_NE(r.out.find("Loops: each compared on its own"), std::string::npos);
  EXPECT_NE(r.out.find("where the main loop `eager_step_N` is not slower"), std::string::npos);
  // Unchanged, both loops are not slower; the main loop leads.
  const std::string c = Write("c.json", LoopsTrace({graph, eager}, 53));
  testing::CliResult same = RunSightline("diff " + Q(a) + " " + Q(c) + " --fail-if-slower 5");
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("Not slower: step time"), std::string::npos);
  EXPECT_NE(same.out.find("in `eager_step_N`"), std::string::npos);
  EXPECT_NE(same.out.find("Other loop: `graph_step_N` not slower"), std::string::npos);
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

// Real runs of examples/graph_decode on an H200 under nsys node tracing (issue 55;
// tests/data/nsys/README.md): the candidate's MLP is 10% wider. Each trace holds a graph_step_N
// and an eager_step_N loop; the eager steps' wall time is host time (the GPU busy 7% of it) that
// moved +12.8% between two single runs, the GPU time launched per step +0.9%. The verdict said
// "Slower: step time +12.8%" at 5%, decided by the host's noise.
TEST_F(CliVerdict, RealGraphDecodePairIsDecidedByTheGpuTime) {
  const std::string data = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/nsys/";
  const std::string pair = Q(data + "graph_decode_node_base_h200.sqlite.gz") + " " +
                           Q(data + "graph_decode_node_mlp110_h200.sqlite.gz");
  testing::CliResult five = RunSightline("diff --fail-if-slower 5 " + pair);
  EXPECT_EQ(five.exit_code, 0) << five.err;
  EXPECT_NE(five.out.find("Not slower: GPU time launched +0.9% ± 0.2% in `eager_step_N` (median "
                          "per step; 95%: +0.6% to +1.1%); step time +12.8% ± 3.4% (host noise "
                          "here: not gated)"),
            std::string::npos)
      << five.out.substr(0, 3000);
  EXPECT_NE(five.out.find("verdict: median GPU time launched per step +0.9% (95%: +0.6% to "
                          "+1.1%), at or below the threshold +5.0%, in `eager_step_N`"),
            std::string::npos);
  // Both loops are compared, each on its own, and the table says so.
  EXPECT_NE(five.out.find("Other loop: `graph_step_N` not slower (GPU time launched +0.8%"),
            std::string::npos);
  EXPECT_NE(five.out.find("  eager_step_N        20       20  not_slower"), std::string::npos);
  EXPECT_NE(five.out.find("  graph_step_N        20       20  not_slower"), std::string::npos);

  // A threshold under the MLP's +0.9%: slower, decided by the GPU time, said first.
  testing::CliResult half = RunSightline("diff --fail-if-slower 0.5 " + pair);
  EXPECT_EQ(half.exit_code, 1) << half.err;
  ExpectFirstLineNamesWhatDecided(half, "Slower", "GPU time launched", 0.5);
  EXPECT_NE(half.err.find("the GPU busy 7% and 6% of the step"), std::string::npos) << half.err;
  EXPECT_EQ(half.out.find("Decided by                                    verdict: median step"),
            std::string::npos);
}

// The shipped pair of one H100 program recorded twice (nsys --cuda-graph-trace=node, then
// =graph): a replay traced whole counts its gaps as GPU time, so graph_step_N's GPU time
// launched is +12.7% and decides; eager_step_N, the main loop, is not slower.
TEST_F(CliVerdict, ShippedGraphDecodePairNamesTheLoopThatDecided) {
  const std::string data = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/nsys/";
  testing::CliResult r =
      RunSightline("diff --fail-if-slower 5 " + Q(data + "graph_decode_node_h100.sqlite.gz") + " " +
                   Q(data + "graph_decode_graph_h100.sqlite.gz"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ExpectFirstLineNamesWhatDecided(r, "Slower", "GPU time launched", 5);
  EXPECT_NE(r.err.find("GPU time launched +12.7% ± 0.2% in `graph_step_N`"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Other loop: `eager_step_N` not slower"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("above the threshold +5.0%, in `graph_step_N`"), std::string::npos);
  EXPECT_NE(r.out.find("Loop shown                    graph_step_N"), std::string::npos);
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
