// `sightline analyze TRACE...`: import each trace, run every analysis, render text, JSON or HTML.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "analyses/common/analysis.h"
#include "analyses/serving/serving_metrics.h"
#include "base/file_io.h"
#include "base/progress_line.h"
#include "base/utf8.h"
#include "cli/commands.h"
#include "distributed/mpi_workers.h"
#include "facts/iterations.h"
#include "pipeline/pipeline.h"
#include "pipeline/rank_workers.h"
#include "reporters/reporter.h"

namespace sightline::cli {
namespace {

constexpr double kMaxMinGapUs = 4611686018427387.0;  // 2^62 ns in microseconds

struct AnalyzeArgs {
  std::vector<std::string> traces;
  std::string iteration_log;     // --iteration-log
  std::string eager_reference;   // --eager-reference
  std::string model_config;      // --model-config
  std::string weights_snapshot;  // --weights-snapshot
  std::string output;
  std::string format = "text";
  bool list = false;
  AnalyzeOptions options;
  double min_gap_us = 2.0;
  std::string requests;            // --requests FILE
  std::string slo;                 // --slo ttft=MS,...
  int top_n = 0;                   // 0: the format's default
  int jobs = 0;                    // --jobs: threads for the ranks; 0: one per core
  bool quiet = false;              // --quiet: no progress line
  bool ranks_only = false;         // --ranks-only
  bool all_rank_sections = false;  // --all-rank-sections
};

int RunAnalyze(const AnalyzeArgs& args) {
  if (args.list) {
    for (const AnalysisEntry& a : Analyses()) std::printf("%-18s %s\n", a.name, a.summary);
    for (const MultiTraceAnalysisEntry& a : MultiTraceAnalyses()) {
      std::printf("%-18s %s (%s)\n", a.name, a.summary,
                  a.kind == TraceSetKind::kRanks ? "analyze" : "sightline diff");
    }
    return kExitOk;
  }
  if (args.traces.empty() && args.requests.empty()) {
    return ReportError(InvalidArgumentError(
        "no input given; usage: sightline analyze FILE|DIR... (traces, a serving benchmark's "
        "results, an iteration log, a TensorRT engine's exports or Nsight Compute exports; "
        "`sightline formats` lists them)"));
  }
  AnalyzeOptions options = args.options;
  if (!args.slo.empty()) {
    StatusOr<SloOptions> slo = ParseSlo(args.slo);
    if (!slo.ok()) return ReportError(slo.status());
    options.serving.slo = *slo;
  }
  options.idle_gaps.min_gap_ns = static_cast<DurationNs>(args.min_gap_us * 1000.0);
  // A terminal wants the top rows; JSON feeds tools and diffs, so it keeps more.
  options.top_n = args.top_n > 0 ? args.top_n
                                 : (args.format == "json"   ? 100
                                    : args.format == "html" ? 50
                                                            : 15);

  // Under mpirun/srun (and with MPI in the build) the ranks are spread over the MPI processes;
  // otherwise over threads. Only process 0 writes the report, the progress line and errors.
  StatusOr<std::unique_ptr<RankWorkers>> mpi = StartMpiWorkers();
  if (!mpi.ok()) return ReportError(mpi.status());
  const bool root = !*mpi || (*mpi)->root();
  if (!*mpi && LaunchedByMpi() && !MpiBuilt()) {
    // Several copies started by mpirun, but this build has no MPI: the first does everything.
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
      const char* v = std::getenv(name);
      if (v != nullptr && std::string(v) != "0") return kExitOk;
    }
    std::fprintf(stderr,
                 "sightline: note: built without MPI; this process analyses every rank, with "
                 "threads\n");
  }
  ProgressLine progress = ProgressLine::ForStderr(args.quiet || !root);
  RunOptions run;
  run.workers = mpi->get();
  run.rank_sections = args.ranks_only          ? RunOptions::RankSections::kNone
                      : args.all_rank_sections ? RunOptions::RankSections::kAll
                                               : RunOptions::RankSections::kAuto;
  run.jobs = args.jobs > 0 ? args.jobs
                           : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run.progress = [&progress](const RankProgress& p) {
    progress.Update(FormatFileProgress(p.files_done, p.files_total, p.bytes_done, p.bytes_total,
                                       progress.elapsed_seconds()),
                    false);
  };
  std::vector<std::string> inputs = args.traces;
  inputs.push_back(args.iteration_log);
  inputs.push_back(args.requests);
  inputs.push_back(args.eager_reference);
  inputs.push_back(args.model_config);
  inputs.push_back(args.weights_snapshot);
  if (Status s = CheckOutputIsNotAnInput(args.output, inputs); !s.ok()) return ReportError(s);
  const NamedInputs named = {{"--requests", args.requests},
                             {"--iteration-log", args.iteration_log},
                             {"--model-config", args.model_config},
                             {"--weights-snapshot", args.weights_snapshot},
                             {"--eager-reference", args.eager_reference}};
  StatusOr<Report> report = AnalyzeFiles(args.traces, options, run, named);
  progress.Clear();
  // Process 0 reports every error (each file's result reaches it) and writes; the others exit 0,
  // so that mpirun does not end process 0 before it has said what went wrong.
  if (!root) return kExitOk;
  if (!report.ok()) return ReportError(report.status());

  std::string out;
  if (args.format == "json") {
    out = RenderJsonReport(*report);
  } else if (args.format == "html") {
    out = RenderHtmlReport(*report);
  } else {
    TextReportOptions text_options;
    out = RenderTextReport(*report, text_options);
  }
  if (args.output.empty() || args.output == "-") {
    WriteToStdout(out);
    return kExitOk;
  }
  Status s = WriteFileAtomically(args.output, out);
  if (!s.ok()) return ReportError(s);
  return kExitOk;
}

}  // namespace

CLI::Option* AddIterationsOption(CLI::App* cmd, std::string& regex, std::string_view extra) {
  std::string help =
      "Regex (RE2 syntax, matched against the whole name) naming the NVTX/record_function ranges "
      "that are iterations; default: ProfilerStep#N and iteration/step/decode_step... names, any "
      "case (docs/analyses/iterations.md)";
  if (!extra.empty()) help += fmt::format("; {}", extra);
  return cmd->add_option("--iterations", regex, help)
      ->type_name("REGEX")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const Status s = CheckIterationsRegex(text);
            return s.ok() ? std::string() : s.message();
          },
          "RE2"));
}

int ReportError(const Status& status) {
  // A message may quote the input (a CSV header, a name): its controls are shown, not obeyed.
  std::fprintf(stderr, "sightline: error: %s\n",
               PrintableText(status.message(), /*keep_line_breaks=*/true).c_str());
  switch (status.code()) {
    case StatusCode::kInternal:
      return kExitFailed;
    case StatusCode::kOutputError:
      return kExitOutput;
    default:
      return kExitUsage;
  }
}

namespace {
int g_stdout_errno = 0;
}  // namespace

bool WriteToStdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) == text.size()) return true;
  if (g_stdout_errno == 0) g_stdout_errno = errno != 0 ? errno : EIO;
  return false;
}

int StdoutErrno() { return g_stdout_errno; }

Status CheckOutputIsNotAnInput(const std::string& output, const std::vector<std::string>& inputs) {
  if (output.empty() || output == "-") return Status::Ok();
  for (const std::string& input : inputs) {
    if (!input.empty()) NoteInputFile(input);
  }
  return CheckNotAnInput(output);
}

void AddAnalyzeCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Read any mix of inputs, each recognised by its content and read through gzip or zstd "
      "(`sightline formats` lists them): traces (nsys SQLite export, PyTorch profiler JSON, "
      "sightline recording, memory snapshot), a serving benchmark's results, an iteration log; "
      "or a TensorRT engine's exports; or Nsight Compute exports. Reports where the "
      "time goes: overview, kernels, CUDA API, memory operations, "
      "iterations, NVTX ranges, idle gaps, serving metrics. Several traces are the ranks of one "
      "job; "
      "under mpirun/srun (mpirun -n K sightline analyze DIR) the "
      "ranks are spread over the MPI processes and process 0 "
      "writes the report. " +
          std::string(MpiBuilt() ? "This build has MPI."
                                 : "This build has no MPI (optional): it "
                                   "spreads the ranks over threads."));
  cmd->add_option(
      "inputs", args->traces,
      "Files or directories (every file in a directory that a reader takes); the format "
      "is recognised from the content, never the name");
  cmd->add_option("-o,--output", args->output, "Write the report to FILE instead of stdout");
  cmd->add_option("--format", args->format, "Report format")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  AddIterationsOption(cmd, args->options.iterations_regex);
  cmd->add_option("--iteration-log", args->iteration_log,
                  "An iteration log (Sightline's SIGHTLINE_ITERATION_LOG, TensorRT-LLM's iteration "
                  "statistics): its per-iteration fields join the iterations section "
                  "(docs/formats/iteration-log.md). The same as giving the file as an input, "
                  "but refused if it is not an iteration log");
  cmd->add_option("--requests", args->requests,
                  "A serving benchmark's results (vLLM, SGLang, AIPerf, trtllm-bench, a request "
                  "log): TTFT, TPOT, ITL, E2E latency, throughput (docs/analyses/serving.md); with "
                  "or without traces. The same as giving the file as an input, but refused if it "
                  "is not serving results");
  cmd->add_option("--eager-reference", args->eager_reference,
                  "A trace of the same program run eagerly, recorded separately: its eager runs "
                  "estimate the per-range GPU time of CUDA graphs the analysed traces ran as a "
                  "whole, and give node-traced replays without capture points (or an eager run in "
                  "their own trace) the ranges of their matched eager kernels there "
                  "(docs/analyses/cuda_graphs.md, \"Graphs traced as a whole\", \"Alignment with "
                  "an eager reference trace\"); refused if it is not a trace")
      ->type_name("TRACE");
  cmd->add_option("--model-config", args->model_config,
                  "A Hugging Face model's config.json: the floor section (how far each step is "
                  "from the least time the GPU allows: weight and KV-cache bytes over memory "
                  "bandwidth, FLOPs over tensor throughput; docs/analyses/floor.md). Each step's "
                  "work comes from --batch/--context or from an iteration log that states it")
      ->type_name("FILE");
  cmd->add_option("--weights-snapshot", args->weights_snapshot,
                  "A PyTorch memory snapshot of the same program, taken after its model was "
                  "loaded: its weights (memory by purpose) are the bytes each step reads, for the "
                  "floor section without --model-config (and beside the config's with one); "
                  "refused if it is not a snapshot or holds no weights")
      ->type_name("SNAPSHOT");
  cmd->add_option("--batch", args->options.floor.batch,
                  "For the floor (with --model-config, --weights-snapshot, or alone on a PyTorch "
                  "trace recorded with record_shapes: the floor from its GEMM shapes): sequences "
                  "decoded in every step (overrides the iteration log's)")
      ->check(PositiveCount<int64_t>());
  cmd->add_option(
         "--context", args->options.floor.context,
         "For the floor (as --batch): tokens already in each sequence's KV cache at a step "
         "(default: the iteration log's KV blocks used, else none)")
      ->check(NumberIn(0, 1e12, "0 to 10^12", "TOKENS"));
  cmd->add_option(
         "--peak-bandwidth", args->options.floor.peak_bandwidth_gbps,
         "For the floor (as --batch): the memory bandwidth in GB/s the floor divides by (a "
         "measured copy bandwidth, say), instead of the datasheet's for the trace's GPU")
      ->check(NumberIn(1e-3, 1e9, "0.001 to 10^9", "GB/s"));
  cmd->add_option(
         "--peak-tflops", args->options.floor.peak_tflops,
         "For the floor (as --batch): the dense tensor throughput in TFLOP/s for the model's "
         "dtype (a measured large GEMM's, say), instead of the datasheet's")
      ->check(NumberIn(1e-3, 1e9, "0.001 to 10^9", "TFLOP/s"));
  cmd->add_option("--slo", args->slo,
                  "Service-level objectives for goodput with serving results, in ms: "
                  "ttft=MS,tpot=MS,e2el=MS (any of them)");
  cmd->add_option("--gc-ranges", args->options.gc_range_names,
                  "Names of the host ranges that mark garbage collections (comma-separated; "
                  "TensorRT-LLM's TLLM_PROFILE_RECORD_GC and Sightline's Python package write "
                  "\"Python GC\")")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--min-gap-us", args->min_gap_us,
                  "Idle gaps shorter than this many microseconds are ignored")
      // Held to the times a trace keeps (2^62 ns), so that the gap in nanoseconds fits in int64.
      ->check(NumberIn(0, kMaxMinGapUs, "0 to 4.6e15 (2^62 ns, the longest time a trace holds)",
                       "NONNEGATIVE"))
      ->capture_default_str();
  cmd->add_option("--top", args->top_n,
                  "Rows kept in each long table (kernels, API calls, gaps, ...); default 15 for "
                  "text, 50 for HTML, 100 for JSON")
      ->check(PositiveCount<int>());
  cmd->add_flag_function(
      "--no-findings", [args](int64_t) { args->options.findings.enabled = false; },
      "Leave out the findings (ranked advice); the analyses' sections stay");
  cmd->add_option("-j,--jobs", args->jobs,
                  "Threads that import rank files at once (several traces); default: one per "
                  "core. Each holds one trace in memory. Threads left over (fewer traces than "
                  "threads, e.g. one trace) run each trace's analyses side by side")
      ->check(PositiveCount<int>());
  CLI::Option* ranks_only = cmd->add_flag(
      "--ranks-only", args->ranks_only,
      "Several ranks: report only the ranks section (collectives, clocks, waits, straggler) and "
      "each input's diagnostics, not every rank's own sections; it keeps process 0's memory to "
      "the collective tables. The default above 16 ranks");
  cmd->add_flag("--all-rank-sections", args->all_rank_sections,
                "Several ranks: keep every rank's own sections (overview, kernels, ...) also above "
                "16 ranks, where they are left out by default; process 0 then holds them all")
      ->excludes(ranks_only);
  cmd->add_option("--ranks-per-host", args->options.ranks.ranks_per_host,
                  "Several ranks: N ranks per host, placed in blocks (rank r on host r / N, as "
                  "torchrun, mpirun --map-by slot and Slurm's block distribution place them). "
                  "Ranks on one host share a clock: one offset per host. Without it, hosts come "
                  "from the traces (nsys: the export's Hostname) or from "
                  "tensorboard_trace_handler's file names ({hostname}_{pid}.*.pt.trace.json), "
                  "else each rank is aligned on its own clock (docs/analyses/ranks.md)")
      ->check(PositiveCount<int32_t>());
  cmd->add_flag("-q,--quiet", args->quiet,
                "No progress line on standard error (it is shown only on a terminal anyway)");
  cmd->add_flag("--list", args->list, "List the analyses and exit");
  cmd->callback([&runner, args] { runner = [args] { return RunAnalyze(*args); }; });
}

}  // namespace sightline::cli
