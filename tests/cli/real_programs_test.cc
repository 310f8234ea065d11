// Real programs recorded on an H200 (examples/programs, run_programs.sh), checked against the truth
// each program printed: a server shaped like vLLM V1 (front, engine core, detokenizer, two CUDA
// workers that replay a CUDA graph per step) recorded with one fixed `-o run.slrec`. Each worker
// kept its own file, the process tree has every process with its parent, and the steps of each
// worker are found without any step range. And Hugging Face transformers' generate() with a
// static cache (torch.compile, CUDA graphs), whose compiling, before the first step, is a phase of
// its own and a finding about start-up that ranks after the steady state's; and the same run
// eagerly, whose prefills are a loop of their own beside the decode steps.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <string>
#include <vector>

#include "testing/cli_runner.h"

namespace sightline {
namespace {

const std::string kDir =
    std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/recorder/mp_server_w2_h200";

simdjson::dom::element Section(simdjson::dom::element report, std::string_view key) {
  for (simdjson::dom::element s : report["sections"].get_array()) {
    if (std::string_view(s["key"]) == key) return s;
  }
  ADD_FAILURE() << "no section " << key;
  return {};
}

// `sightline analyze --format json ARGS`, which must succeed, parsed into `report`.
void AnalyzeJson(const std::string& args, simdjson::dom::parser& parser,
                 simdjson::dom::element& report) {
  testing::CliResult r = testing::RunSightline("analyze --format json " + args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(parser.parse(r.out).get(report), simdjson::SUCCESS);
}

TEST(RealPrograms, ServerWorkersEachKeepTheirFileStepsAndTheRunsProcesses) {
  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  ASSERT_EQ(truth_parser.load(kDir + "/truth.json").get(truth), simdjson::SUCCESS);
  std::map<std::string, int64_t> pid_of;
  std::map<std::string, int64_t> steps_of;
  for (simdjson::dom::element p : truth["processes"].get_array()) {
    const std::string role{std::string_view(p["role"])};
    pid_of[role] = int64_t(p["pid"]);
    int64_t steps = 0;
    if (p["steps"].get(steps) == simdjson::SUCCESS) steps_of[role] = steps;
  }
  for (const auto& [file, role] : std::map<std::string, std::string>{
           {"run.slrec", "worker1"},
           {"run." + std::to_string(pid_of["worker0"]) + ".slrec", "worker0"}}) {
    SCOPED_TRACE(file);
    simdjson::dom::parser parser;
    simdjson::dom::element report;
    ASSERT_NO_FATAL_FAILURE(AnalyzeJson("'" + kDir + "/" + file + "'", parser, report));
    // Each decode step is one replay of the worker's graph; no range says so.
    simdjson::dom::element it = Section(report, "iterations");
    EXPECT_EQ(int64_t(it["facts"]["iterations"]), steps_of[role]);
    EXPECT_EQ(std::string_view(it["facts"]["found_by"]), "graph replays");
    // The run's processes with their parents, and which one this recording is.
    simdjson::dom::element procs = Section(report, "processes");
    EXPECT_EQ(int64_t(procs["facts"]["with_cuda"]), 2);
    std::map<int64_t, int64_t> parent;
    std::map<int64_t, std::string> recording;
    for (simdjson::dom::element row : procs["tables"]["processes"]["rows"].get_array()) {
      parent[int64_t(row["pid"])] = int64_t(row["ppid"]);
      recording[int64_t(row["pid"])] = std::string(std::string_view(row["recording"]));
    }
    for (const auto& [r, pid] : pid_of) ASSERT_TRUE(parent.count(pid)) << r;
    EXPECT_EQ(parent[pid_of["engine_core"]], pid_of["front"]);
    EXPECT_EQ(parent[pid_of["detokenizer"]], pid_of["front"]);
    EXPECT_EQ(parent[pid_of["worker0"]], pid_of["engine_core"]);
    EXPECT_EQ(parent[pid_of["worker1"]], pid_of["engine_core"]);
    EXPECT_EQ(recording[pid_of[role]], "this trace");
    EXPECT_EQ(recording[pid_of[role == "worker0" ? "worker1" : "worker0"]], "another file");
    EXPECT_EQ(recording[pid_of["engine_core"]], "none");
  }
}

// The recordings of the run given together (its folder, or the two files): one report for the
// run in which every process of it is a row on one clock, checked against the truth the program
// printed: pids, parents, which processes used CUDA, each worker's steps. The workers step
// together, so their step starts, put on one clock, agree; and they are not ranks of a job.
TEST(RealPrograms, TheServersRecordingsAreOneRunOnOneClock) {
  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  ASSERT_EQ(truth_parser.load(kDir + "/truth.json").get(truth), simdjson::SUCCESS);
  std::map<int64_t, std::string> role_of;
  std::map<std::string, int64_t> pid_of, steps_of;
  std::map<std::string, bool> cuda_of;
  for (simdjson::dom::element p : truth["processes"].get_array()) {
    const std::string role{std::string_view(p["role"])};
    role_of[int64_t(p["pid"])] = role;
    pid_of[role] = int64_t(p["pid"]);
    int64_t steps = 0;
    bool cuda = false;
    if (p["steps"].get(steps) == simdjson::SUCCESS) steps_of[role] = steps;
    if (p["cuda"].get(cuda) == simdjson::SUCCESS) cuda_of[role] = cuda;
  }
  const std::string worker0_file = "run." + std::to_string(pid_of["worker0"]) + ".slrec";
  for (const std::string& args :
       {"'" + kDir + "'", "'" + kDir + "/run.slrec' '" + kDir + "/" + worker0_file + "'"}) {
    SCOPED_TRACE(args);
    simdjson::dom::parser parser;
    simdjson::dom::element report;
    ASSERT_NO_FATAL_FAILURE(AnalyzeJson(args, parser, report));
    size_t run_sections = 0, ranks_sections = 0;
    for (simdjson::dom::element s : report["sections"].get_array()) {
      run_sections += std::string_view(s["key"]) == "run_processes";
      ranks_sections += std::string_view(s["key"]) == "ranks";
    }
    EXPECT_EQ(run_sections, 1u);
    EXPECT_EQ(ranks_sections, 0u);  // processes of one program, not ranks
    simdjson::dom::element run = Section(report, "run_processes");
    EXPECT_EQ(int64_t(run["facts"]["recordings_given"]), 2);
    // One clock: the recordings' offsets to CLOCK_MONOTONIC agree to a microsecond, and the
    // workers' step starts on it to well under a step (about 1 ms here).
    EXPECT_LT(int64_t(run["facts"]["clock_spread_ns"]), 1'000);
    EXPECT_GE(int64_t(run["facts"]["step_start_skew_ns"]), 0);
    EXPECT_LT(int64_t(run["facts"]["step_start_skew_ns"]), 100'000);
    const int64_t steady = int64_t(run["facts"]["steady_ns"]);
    EXPECT_GT(steady, 0);
    std::map<int64_t, simdjson::dom::element> row_of;
    for (simdjson::dom::element row : run["tables"]["processes"]["rows"].get_array()) {
      row_of[int64_t(row["pid"])] = row;
    }
    for (const auto& [role, pid] : pid_of) {
      SCOPED_TRACE(role);
      ASSERT_TRUE(row_of.count(pid));
      const simdjson::dom::element row = row_of[pid];
      const bool cuda = cuda_of.count(role) && cuda_of[role];
      EXPECT_EQ(std::string_view(row["recording"]) != "none", cuda);
      if (cuda) {
        EXPECT_EQ(int64_t(row["steps"]), steps_of[role]);
        EXPECT_EQ(std::string_view(row["steps_by"]), "graph replays");
        EXPECT_GT(int64_t(row["kernels"]), 0);
        EXPECT_GT(int64_t(row["gpu_busy_steady_ns"]), 0);
        EXPECT_LE(int64_t(row["gpu_busy_steady_ns"]), steady);
      } else {
        EXPECT_TRUE(row["steps"].is_null());
      }
      // CPU while the GPUs idled is part of the CPU in the steady state.
      EXPECT_LE(int64_t(row["cpu_while_gpu_idle_ns"]), int64_t(row["cpu_steady_ns"]));
    }
    EXPECT_EQ(std::string_view(row_of[pid_of["worker0"]]["recording"]), worker0_file);
    EXPECT_EQ(std::string_view(row_of[pid_of["worker1"]]["recording"]), "run.slrec");
    EXPECT_EQ(int64_t(row_of[pid_of["engine_core"]]["ppid"]), pid_of["front"]);
    EXPECT_EQ(int64_t(row_of[pid_of["detokenizer"]]["ppid"]), pid_of["front"]);
    EXPECT_EQ(int64_t(row_of[pid_of["worker0"]]["ppid"]), pid_of["engine_core"]);
    EXPECT_EQ(int64_t(row_of[pid_of["worker1"]]["ppid"]), pid_of["engine_core"]);
    // The windows count every step of the busiest worker once.
    int64_t window_steps = 0;
    for (simdjson::dom::element w : run["tables"]["windows"]["rows"].get_array()) {
      window_steps += int64_t(w["steps"]);
      const double busy = double(w["gpu_busy_pct"]);
      EXPECT_GE(busy, 0.0);
      EXPECT_LE(busy, 100.0);
    }
    EXPECT_EQ(window_steps, steps_of["worker0"]);
    // The GPUs idled most of the steady state while the pipeline's processes without CUDA
    // worked: the finding names one of them, never a worker.
    size_t fired = 0;
    for (simdjson::dom::element f : report["findings"].get_array()) {
      if (std::string_view(f["id"]) != "other_process_busy") continue;
      ++fired;
      const std::string where{std::string_view(f["where"])};
      const std::string named = where.substr(0, where.find(' ', 8));  // "process PID"
      const int64_t pid = std::stoll(named.substr(8));
      EXPECT_TRUE(role_of[pid] == "engine_core" || role_of[pid] == "detokenizer" ||
                  role_of[pid] == "front")
          << where;
      EXPECT_LE(int64_t(f["estimated_savings_ns"]), steady);
    }
    EXPECT_EQ(fired, 1u);
  }
}
}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// A memory snapshot alone shows the sections it can fill (memory), not a trace's empty ones
// (overview, kernels 0, API calls 0, idle gaps none), and says what another input would add.
TEST(RealPrograms, ProcessesWithoutCudaKeepTheirNvtxRanges) {
  // mp_server.py --nvtx: the front marks each request's tokenizing and the detokenizer each
  // token with NVTX; neither initialises CUDA, and both are recorded (NVTX_INJECTION64_PATH).
  const std::string dir =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/recorder/mp_server_nvtx_w2_h200";
  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  ASSERT_EQ(truth_parser.load(dir + "/truth.json").get(truth), simdjson::SUCCESS);
  int64_t detok_pid = 0;
  for (simdjson::dom::element p : truth["processes"].get_array()) {
    if (std::string_view(p["role"]) == "detokenizer") detok_pid = int64_t(p["pid"]);
  }
  for (const auto& [file, count] : std::map<std::string, int64_t>{
           {"run.slrec", int64_t(truth["requests"])},
           {"run." + std::to_string(detok_pid) + ".slrec", int64_t(truth["tokens"])}}) {
    SCOPED_TRACE(file);
    simdjson::dom::parser parser;
    simdjson::dom::element report;
    ASSERT_NO_FATAL_FAILURE(AnalyzeJson("'" + dir + "/" + file + "'", parser, report));
    simdjson::dom::element overview = Section(report, "overview");
    EXPECT_EQ(int64_t(overview["facts"]["nvtx_ranges"]), count);
    EXPECT_EQ(int64_t(overview["facts"]["kernels"]), 0);
    // Front, detokenizer and the two workers each wrote a recording.
    EXPECT_EQ(int64_t(Section(report, "processes")["facts"]["with_cuda"]), 4);
  }
}

TEST(RealPrograms, CompiledGenerateStartupIsCompilingAndRanksLast) {
  const std::string dir =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/recorder/hf_static_small_h200";
  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  ASSERT_EQ(truth_parser.load(dir + "/truth.json").get(truth), simdjson::SUCCESS);
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_NO_FATAL_FAILURE(AnalyzeJson("'" + dir + "/run.slrec.gz'", parser, report));
  // Steps: each decode step replays the graph; 2 calls of 15 decode steps (the first forward of
  // each call is the prefill), less the one run while its graph was captured.
  const int64_t calls = int64_t(truth["calls"]);
  const int64_t passes = int64_t(truth["forward_passes_per_call"]);
  simdjson::dom::element it = Section(report, "iterations")["facts"];
  EXPECT_EQ(int64_t(it["iterations"]), calls * (passes - 1) - 1);
  // The second call's set-up and prefill (15.6 ms, 169 kernels) are not in the first call's last
  // step (which was 19.7 ms with them): no step is 3 times the median step.
  EXPECT_LT(int64_t(it["wall_max_ns"]), 3 * int64_t(it["wall_median_ns"]));
  // The first call took ~20 s (truth: call_s[0]), nearly all of it before the first step: the
  // compile workers and ptxas on CPU, with the GPU idle, then Triton's autotuning.
  simdjson::dom::element ph = Section(report, "phases");
  const double first_call_s = double(truth["call_s"].at(0));
  const int64_t startup = int64_t(ph["facts"]["startup_ns"]);
  const int64_t compile = int64_t(ph["facts"]["compile_ns"]);
  EXPECT_GT(startup, static_cast<int64_t>(0.8 * first_call_s * 1e9));
  EXPECT_GT(compile, startup / 3);
  EXPECT_GT(int64_t(ph["facts"]["autotune_ns"]), 0);
  EXPECT_GE(int64_t(ph["facts"]["compiler_processes"]), 2);  // the worker pool and ptxas at least
  EXPECT_GT(int64_t(ph["facts"]["before_trace_ns"]), 0);     // imports before CUDA
  // Lazy module loading: PyTorch's kernels' first launches (building the model) loaded their code.
  EXPECT_GT(int64_t(ph["facts"]["module_loading_launches"]), 10);
  EXPECT_EQ(int64_t(ph["facts"]["module_loading_startup_ns"]),
            int64_t(ph["facts"]["module_loading_ns"]));
  // The start-up finding: last, though its figure is the largest.
  simdjson::dom::array findings = report["findings"].get_array();
  ASSERT_GT(findings.size(), 1u);
  simdjson::dom::element last = findings.at(findings.size() - 1);
  EXPECT_EQ(std::string_view(last["id"]), "startup");
  EXPECT_TRUE(bool(last["once_per_start"]));
  EXPECT_GE(int64_t(last["estimated_savings_ns"]), compile);
  EXPECT_FALSE(bool(findings.at(0)["once_per_start"]));
}

TEST(RealPrograms, SnapshotAloneShowsOnlyWhatItCanFill) {
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_NO_FATAL_FAILURE(AnalyzeJson(
      "'" + std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/torch_snapshot/history.pickle'",
      parser, report));
  std::vector<std::string> keys;
  bool note = false;
  for (simdjson::dom::element s : report["sections"].get_array()) {
    keys.emplace_back(std::string_view(s["key"]));
    simdjson::dom::array notes;
    if (s["notes"].get(notes) == simdjson::SUCCESS) {
      for (simdjson::dom::element n : notes) {
        note = note || std::string_view(n).find("holds no timeline") != std::string_view::npos;
      }
    }
  }
  EXPECT_EQ(keys, std::vector<std::string>{"memory"});
  EXPECT_TRUE(note);
}

// Hugging Face generate() run eagerly, 2 calls of 16 forward passes: no range marks a step, so the
// steps come from the host's synchronizations. Each call's first forward pass (the prefill, 128
// prompt tokens) runs other GEMM and attention kernels than the 15 decode steps after it: the
// decode steps are the loop the findings read, the prefills a loop of their own beside it (one per
// call, each opening a run of decode steps), and the few launches before each prefill in neither.
TEST(RealPrograms, EagerGeneratePrefillIsALoopBesideTheDecodeSteps) {
  const std::string dir =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/recorder/hf_eager_small_h200";
  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  ASSERT_EQ(truth_parser.load(dir + "/truth.json").get(truth), simdjson::SUCCESS);
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_NO_FATAL_FAILURE(AnalyzeJson("'" + dir + "/run.slrec.gz'", parser, report));
  const int64_t calls = int64_t(truth["calls"]);
  const int64_t passes = int64_t(truth["forward_passes_per_call"]);
  simdjson::dom::element it = Section(report, "iterations");
  EXPECT_EQ(std::string_view(it["facts"]["found_by"]), "synchronize cadence");
  EXPECT_EQ(int64_t(it["facts"]["iterations"]), calls * (passes - 1));
  // The first call (truth: call_s[0], seconds against a tenth of one) is the warm-up.
  EXPECT_GT(double(truth["call_s"].at(0)), 10 * double(truth["call_s"].at(1)));
  EXPECT_EQ(int64_t(it["facts"]["warmup"]), passes - 1);
  simdjson::dom::array loops = it["tables"]["loops"]["rows"].get_array();
  ASSERT_EQ(loops.size(), 2u);
  simdjson::dom::element decode = loops.at(0), prefill = loops.at(1);
  EXPECT_EQ(int64_t(decode["iterations"]), calls * (passes - 1));
  EXPECT_EQ(int64_t(prefill["iterations"]), calls);
  EXPECT_NE(std::string_view(prefill["name"]).find("opens each run of the loop"),
            std::string_view::npos)
      << std::string_view(prefill["name"]);
  // The prefill's 4 x 128 token rows keep the GPU busier than a decode step's 4.
  EXPECT_GT(int64_t(prefill["gpu_busy_launched_median_ns"]),
            int64_t(decode["gpu_busy_launched_median_ns"]));
  // The other steps (set-up between calls) are counted in a note, in no loop.
  bool noted = false;
  for (simdjson::dom::element n : it["notes"].get_array()) {
    noted |= std::string_view(n).find("in no loop") != std::string_view::npos;
  }
  EXPECT_TRUE(noted);
}

// The compiled generate() against its floor, with the model's config (Llama-3.2-1B's shape at the
// 2 layers the program built): the weights and KV bytes a step reads are the program's own
// (truth.json: its parameters and its static cache's tensors), and the graph replays keep the GPU
// near the floor while the host holds the step far above it.
TEST(RealPrograms, CompiledGenerateAgainstItsFloor) {
  const std::string dir =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/recorder/hf_static_small_h200";
  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  ASSERT_EQ(truth_parser.load(dir + "/truth.json").get(truth), simdjson::SUCCESS);
  const int64_t batch = int64_t(truth["batch"]);
  const int64_t cache_len = int64_t(truth["prompt"]) + int64_t(truth["new_tokens"]);
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_NO_FATAL_FAILURE(
      AnalyzeJson("'" + dir + "/run.slrec.gz' --model-config '" + SIGHTLINE_SOURCE_DIR +
                      "/tests/data/model_config/llama_3_2_1b_2layers.config.json' --batch " +
                      std::to_string(batch) + " --context " + std::to_string(cache_len),
                  parser, report));
  simdjson::dom::array rows = Section(report, "floor")["tables"]["families"]["rows"];
  ASSERT_EQ(rows.size(), 1u);
  simdjson::dom::element decode = rows.at(0);
  EXPECT_EQ(int64_t(decode["weight_bytes"]), int64_t(truth["param_bytes"]));
  // Read: the whole static cache; written: one token per sequence (2 layers x K and V x 8 heads
  // x 64 x 2 bytes = 4 KiB a token).
  EXPECT_EQ(int64_t(decode["kv_bytes"]), int64_t(truth["kv_bytes"]) + batch * 4096);
  EXPECT_EQ(std::string_view(decode["bound"]), "memory");
  const double busy_ratio = double(decode["busy_ratio"]), ratio = double(decode["ratio"]);
  EXPECT_GT(busy_ratio, 1.0);
  EXPECT_LT(busy_ratio, 5.0);        // 2.6x on the H200
  EXPECT_GT(ratio, 3 * busy_ratio);  // the host, not the GPU, holds the step (16.8x)
  EXPECT_EQ(std::string_view(decode["holder"]), "GPU idle");
}

// The floor from GEMM shapes alone (no config, no snapshot) on a real PyTorch profiler trace: 5
// decode steps of the Llama-3.2-1B-shaped model at batch 16, context 1024, recorded with
// record_shapes on the H200 by examples/programs/floor_sweep.py --torch-profile. The weights the
// operators' shapes name are the program's parameters less its RMSNorm weights (no GEMM reads
// them: 0.005%), and the FLOPs the program's own count.
TEST(RealPrograms, FloorFromTheGemmShapesOfAProfiledDecode) {
  const std::string base =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/floor_dense_b16_h200_shapes";
  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  ASSERT_EQ(truth_parser.load(base + ".truth.json").get(truth), simdjson::SUCCESS);
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_NO_FATAL_FAILURE(AnalyzeJson("'" + base + ".json.gz' --batch " +
                                          std::to_string(int64_t(truth["batch"])) + " --context " +
                                          std::to_string(int64_t(truth["context"])),
                                      parser, report));
  simdjson::dom::element floor = Section(report, "floor");
  EXPECT_NE(std::string_view(floor["facts"]["weights_from"]).find("GEMM shapes"),
            std::string_view::npos);
  simdjson::dom::array rows = floor["tables"]["families"]["rows"];
  ASSERT_EQ(rows.size(), 1u);
  simdjson::dom::element decode = rows.at(0);
  EXPECT_EQ(int64_t(decode["steps"]), int64_t(truth["steps"]));
  const double weights = double(int64_t(decode["weight_bytes"]));
  const double params = double(int64_t(truth["param_bytes"]));
  EXPECT_LE(weights, params);
  EXPECT_GT(weights, 0.999 * params);
  EXPECT_NEAR(double(int64_t(decode["flops"])), double(int64_t(truth["flops"])),
              1e-3 * double(int64_t(truth["flops"])));
  EXPECT_EQ(std::string_view(decode["bound"]), "memory");
}

}  // namespace
}  // namespace sightline
