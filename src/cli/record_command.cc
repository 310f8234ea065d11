// `sightline record [options] -- CMD ARGS...`: runs CMD with libsightline_recorder.so injected into
// CUDA (CUDA_INJECTION64_PATH) and NVTX (NVTX_INJECTION64_PATH), passes the options on as
// SIGHTLINE_RECORD_* variables (src/shared/recorder_env.h), forwards termination signals,
// and exits with CMD's exit code (128+N when a signal N ended it, as a shell reports). Afterwards
// it prints one line to stderr: the files written, their records and drops.
// docs/formats/recorder.md.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_io.h"
#include "cli/commands.h"
#include "cli/process_watch.h"
#include "shared/output_claim.h"
#include "shared/recorder_env.h"
#include "shared/recorder_format.h"

namespace sightline::cli {
namespace {

constexpr int kExitCannotExecute = 126;  // as a shell: found but not executable
constexpr int kExitNotFound = 127;       // as a shell: command not found

struct RecordArgs {
  std::string capture_range = "none";
  std::string capture_range_end = "stop";
  std::string ranks;
  std::string output = recenv::kDefaultOutputPattern;
  std::string buffer_size;
  bool driver_api = false;
  bool all_api_calls = false;
  std::string cuda_graph_trace = "node";
  bool gpu_metrics = false;
  int gpu_metrics_frequency = 10000;  // Hz, nsys's default
  bool cuda_memory_usage = false;
  bool print_recorder_path = false;
  std::vector<std::string> command;
};

volatile sig_atomic_t g_child = 0;

// Forwards a signal to the program, except one the terminal sent: that reached the program's
// process group already.
void ForwardSignal(int sig, siginfo_t* info, void*) {
  if (g_child > 0 && (info == nullptr || info->si_code != SI_KERNEL)) kill(g_child, sig);
}

StatusOr<size_t> ParseBufferSize(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  uint64_t mult = 0;
  if (unit.empty() || unit == "B") mult = 1;
  if (unit == "K" || unit == "KiB" || unit == "k") mult = 1 << 10;
  if (unit == "M" || unit == "MiB" || unit == "m") mult = 1 << 20;
  if (digits == 0 || digits > 6 || mult == 0) {
    return InvalidArgumentError("--buffer-size '" + text +
                                "': expected a size such as 8M, 4096K or 8388608");
  }
  const uint64_t bytes = std::stoull(text.substr(0, digits)) * mult;
  if (bytes < (64u << 10) || bytes > (1u << 30)) {
    return InvalidArgumentError("--buffer-size '" + text + "' must lie between 64K and 1024M");
  }
  return static_cast<size_t>(bytes);
}

std::string SelfDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// Where `cmake --install` puts the library, relative to the installed binary's folder (set by the
// top-level CMakeLists.txt from GNUInstallDirs; ../lib/sightline for the usual lib directory).
#ifndef SIGHTLINE_INSTALLED_RECORDER_DIR
#define SIGHTLINE_INSTALLED_RECORDER_DIR "../lib/sightline"
#endif

// SIGHTLINE_RECORDER_LIB, then the build tree (../cuda/recorder/ beside src/), then beside the
// binary, then the installed location (../lib/sightline/ or wherever the install put it).
StatusOr<std::string> FindRecorderLibrary() {
  constexpr char kLib[] = "libsightline_recorder.so";
  if (const char* env = std::getenv("SIGHTLINE_RECORDER_LIB"); env != nullptr && *env != '\0') {
    if (access(env, R_OK) == 0) return std::filesystem::absolute(env).string();
    return NotFoundError(std::string("SIGHTLINE_RECORDER_LIB=") + env +
                         " is not a readable file; point it at libsightline_recorder.so");
  }
  const std::string dir = SelfDir();
  std::vector<std::string> tried;
  for (const std::string& c :
       {dir + "/../cuda/recorder/" + kLib, dir + "/" + kLib,
        dir + "/" SIGHTLINE_INSTALLED_RECORDER_DIR "/" + kLib, dir + "/../lib/sightline/" + kLib}) {
    if (std::find(tried.begin(), tried.end(), c) != tried.end()) continue;
    if (access(c.c_str(), R_OK) == 0) {
      return std::filesystem::weakly_canonical(c).string();
    }
    tried.push_back(c);
  }
  std::string msg =
      "cannot find libsightline_recorder.so (the CUPTI library `sightline record` injects). Build "
      "the GPU parts (they need the CUDA toolkit with CUPTI) or set SIGHTLINE_RECORDER_LIB. Tried:";
  for (const std::string& t : tried) msg += "\n  " + t;
  return NotFoundError(msg);
}

// The output pattern as an absolute path (the program may change directory), with a directory that
// exists and is writable.
StatusOr<std::string> CheckOutputPattern(const std::string& pattern) {
  if (pattern.empty()) return InvalidArgumentError("-o: empty output path");
  const std::filesystem::path p = std::filesystem::absolute(pattern);
  const std::filesystem::path dir = p.parent_path();
  if (dir.string().find('%') == std::string::npos) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      return InvalidArgumentError("-o " + pattern + ": directory " + dir.string() +
                                  " does not exist; create it first");
    }
    if (access(dir.c_str(), W_OK) != 0) {
      return InvalidArgumentError("-o " + pattern + ": directory " + dir.string() +
                                  " is not writable (" + std::strerror(errno) + ")");
    }
  }
  return p.string();
}

struct FileSummary {
  uint64_t records = 0, kernels = 0, graphs = 0, dropped = 0, metric_samples = 0, graph_nodes = 0;
  uint64_t api_calls = 0, ranges = 0;
  bool truncated = false;
  bool not_regular = false;  // -o /dev/null, /dev/full, a FIFO: nothing to read back
};

FileSummary Summarize(const std::string& path) {
  FileSummary s;
  // Only a regular file is read back: /dev/full or /dev/zero would never end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    s.not_regular = true;
    return s;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  recfmt::ReadSummary read;
  recfmt::DropsBody drops{};
  const std::string err =
      recfmt::ReadRecords(bytes, &read, [&](recfmt::RecordType type, std::string_view body) {
        if (type == recfmt::RecordType::kKernel) ++s.kernels;
        if (type == recfmt::RecordType::kApi) ++s.api_calls;
        if (type == recfmt::RecordType::kRange) ++s.ranges;
        if (type == recfmt::RecordType::kGraph) ++s.graphs;
        if (type == recfmt::RecordType::kGraphNode) ++s.graph_nodes;
        if (type == recfmt::RecordType::kGpuMetricSample) ++s.metric_samples;
        if (type == recfmt::RecordType::kDrops) drops = recfmt::DecodeBody<recfmt::DropsBody>(body);
      });
  s.records = read.records;
  s.dropped =
      drops.cupti_dropped_records + drops.queue_dropped_records + drops.graph_node_dropped_records;
  s.truncated = !err.empty() || read.bad_chunks > 0;
  return s;
}

// The files of the run and the processes that wrote them, from the manifest ("PID PATH" lines,
// recording/output_claim.h), in order of creation.
std::vector<recenv::ClaimedOutput> ReadManifest(const std::string& manifest) {
  std::ifstream in(manifest);
  std::stringstream ss;
  ss << in.rdbuf();
  return recenv::ParseManifest(ss.str());
}

std::string FileLine(const std::string& path) {
  const FileSummary s = Summarize(path);
  if (s.not_regular) return path + " (not a regular file: not read back)";
  return path + " (" + std::to_string(s.records) + " records, " + std::to_string(s.kernels) +
         " kernels, " +
         // A process that never initialised CUDA but marked NVTX ranges (a front end, a
         // detokenizer) writes a recording of its ranges alone.
         (s.api_calls == 0 && s.ranges > 0 ? std::to_string(s.ranges) + " NVTX ranges only, "
                                           : std::string()) +
         (s.graphs ? std::to_string(s.graphs) + " whole-graph runs, " : std::string()) +
         (s.graph_nodes ? std::to_string(s.graph_nodes) + " graph node records, " : std::string()) +
         (s.metric_samples ? std::to_string(s.metric_samples) + " GPU metric samples, "
                           : std::string()) +
         std::to_string(s.dropped) + " dropped" + (s.truncated ? ", cut off" : "") + ")";
}

// One line to stderr: the run's processes, those that recorded (CUDA, or NVTX alone) and the files
// they wrote.
void PrintSummary(const std::vector<recenv::ClaimedOutput>& files, size_t processes,
                  const std::string& processes_file, const std::string& program) {
  const std::string tree = processes_file.empty()
                               ? std::string()
                               : std::to_string(processes) +
                                     (processes == 1 ? " process" : " processes") +
                                     " (tree and CPU time in " + processes_file + "); ";
  if (files.empty()) {
    std::fprintf(stderr,
                 "sightline record: %sno CUDA recording: %s never initialised CUDA, so there was "
                 "nothing to record (or no selected rank ran here)\n",
                 tree.c_str(), program.c_str());
    return;
  }
  std::string line = "sightline record: " + tree + std::to_string(files.size()) +
                     (files.size() == 1 ? " process" : " processes") + " used CUDA or NVTX, wrote";
  for (size_t i = 0; i < files.size(); ++i) {
    line += (i ? "; " : " ") + FileLine(files[i].path);
    if (files.size() > 1) line += " [pid " + std::to_string(files[i].pid) + "]";
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

[[noreturn]] void ExecOrExit(const std::vector<std::string>& command, int error_fd) {
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  const int err = errno;
  if (error_fd >= 0) {
    (void)!write(error_fd, &err, sizeof err);
    _exit(err == ENOENT ? kExitNotFound : kExitCannotExecute);
  }
  std::fprintf(stderr, "sightline: error: cannot run '%s': %s\n", argv[0],
               err == ENOENT ? "command not found" : std::strerror(err));
  std::exit(err == ENOENT ? kExitNotFound : kExitCannotExecute);
}

int RunRecord(const RecordArgs& args) {
  if (args.print_recorder_path) {
    StatusOr<std::string> lib = FindRecorderLibrary();
    if (!lib.ok()) return ReportError(lib.status());
    std::printf("%s\n", lib->c_str());
    return 0;
  }
  if (args.command.empty()) {
    return ReportError(InvalidArgumentError(
        "no program given; usage: sightline record [options] -- PROGRAM [ARGS...]"));
  }
  int repeat = 0;
  if (std::string err = recenv::ParseCaptureRangeEnd(args.capture_range_end, &repeat);
      !err.empty()) {
    return ReportError(InvalidArgumentError("--capture-range-end: " + err));
  }
  bool whole_graphs = false;
  uint32_t graph_sample = 0;
  if (std::string err =
          recenv::ParseGraphTrace(args.cuda_graph_trace, &whole_graphs, &graph_sample);
      !err.empty()) {
    return ReportError(InvalidArgumentError("--cuda-graph-trace: " + err));
  }
  std::vector<recenv::RankRange> ranks;
  if (!args.ranks.empty()) {
    if (std::string err = recenv::ParseRankList(args.ranks, &ranks); !err.empty()) {
      return ReportError(InvalidArgumentError("--ranks: " + err));
    }
  }
  size_t buffer_bytes = 0;
  if (!args.buffer_size.empty()) {
    StatusOr<size_t> b = ParseBufferSize(args.buffer_size);
    if (!b.ok()) return ReportError(b.status());
    buffer_bytes = *b;
  }
  StatusOr<std::string> output = CheckOutputPattern(args.output);
  if (!output.ok()) return ReportError(output.status());

  // A rank that is not selected runs the program as it is: no injection, no overhead.
  if (!ranks.empty() && !recenv::RankSelected(ranks, recenv::DetectRank())) {
    ExecOrExit(args.command, -1);
  }
  StatusOr<std::string> lib = FindRecorderLibrary();
  if (!lib.ok()) return ReportError(lib.status());

  std::string manifest =
      (std::filesystem::temp_directory_path() / "sightline-record-XXXXXX").string();
  const int manifest_fd = mkstemp(manifest.data());
  if (manifest_fd < 0) {
    return ReportError(IoError("cannot create a temporary file in " +
                               std::filesystem::temp_directory_path().string() + ": " +
                               std::strerror(errno)));
  }
  close(manifest_fd);

  if (const char* old = std::getenv("CUDA_INJECTION64_PATH"); old != nullptr && *old != '\0') {
    std::fprintf(stderr, "sightline record: note: replacing CUDA_INJECTION64_PATH=%s\n", old);
  }
  setenv("CUDA_INJECTION64_PATH", lib->c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", lib->c_str(), 1);
  setenv(recenv::kOutputEnv, output->c_str(), 1);
  setenv(recenv::kCaptureRangeEnv, args.capture_range.c_str(), 1);
  setenv(recenv::kCaptureEndEnv, args.capture_range_end.c_str(), 1);
  setenv(recenv::kManifestEnv, manifest.c_str(), 1);
  if (!args.ranks.empty()) setenv(recenv::kRanksEnv, args.ranks.c_str(), 1);
  if (buffer_bytes > 0) setenv(recenv::kBufferBytesEnv, std::to_string(buffer_bytes).c_str(), 1);
  setenv(recenv::kDriverApiEnv, args.driver_api ? "1" : "0", 1);
  if (args.all_api_calls) setenv(recenv::kQueryCallsEnv, "1", 1);
  setenv(recenv::kGraphTraceEnv, args.cuda_graph_trace.c_str(), 1);
  if (args.gpu_metrics) {
    setenv(recenv::kGpuMetricsEnv, std::to_string(args.gpu_metrics_frequency).c_str(), 1);
  } else {
    unsetenv(recenv::kGpuMetricsEnv);
  }
  setenv(recenv::kCudaMemoryEnv, args.cuda_memory_usage ? "1" : "0", 1);

  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return ReportError(IoError(std::string("pipe: ") + std::strerror(errno)));
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = fork();
  if (child < 0) return ReportError(IoError(std::string("fork: ") + std::strerror(errno)));
  if (child == 0) {
    close(error_pipe[0]);
    ExecOrExit(args.command, error_pipe[1]);
  }
  g_child = child;
  close(error_pipe[1]);
  ProcessWatchOptions watch_options;
  if (const char* w = std::getenv(recenv::kWatchEnv); w != nullptr && std::string_view(w) == "0") {
    watch_options.watch = false;
  }
  ProcessWatcher watcher(watch_options);
  {
    std::string command;
    for (const std::string& a : args.command) command += (command.empty() ? "" : " ") + a;
    watcher.Start(child, std::filesystem::path(args.command[0]).filename().string(), command);
  }
  struct sigaction sa {};
  sa.sa_sigaction = ForwardSignal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);

  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);

  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  timespec reaped{};
  clock_gettime(CLOCK_MONOTONIC, &reaped);
  watcher.Stop(static_cast<int64_t>(reaped.tv_sec) * 1'000'000'000 + reaped.tv_nsec);
  g_child = 0;
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    unlink(manifest.c_str());
    std::fprintf(stderr, "sightline: error: cannot run '%s': %s\n", args.command[0].c_str(),
                 exec_errno == ENOENT ? "command not found (not a file, nor in PATH)"
                                      : std::strerror(exec_errno));
    return exec_errno == ENOENT ? kExitNotFound : kExitCannotExecute;
  }
  const std::vector<recenv::ClaimedOutput> files = ReadManifest(manifest);
  unlink(manifest.c_str());
  // The process tree beside the recordings: named after the root process's own output name.
  std::string processes_file =
      ProcessesPathFor(recenv::ExpandOutputPattern(*output, child, recenv::DetectRank()));
  std::vector<std::pair<int64_t, std::string>> written;
  for (const recenv::ClaimedOutput& f : files) written.emplace_back(f.pid, f.path);
  if (Status st =
          WriteFileAtomically(processes_file, ProcessesJson(watcher, args.command, written));
      !st.ok()) {
    std::fprintf(stderr, "sightline record: cannot write the process tree: %s\n",
                 st.message().c_str());
    processes_file.clear();
  }
  PrintSummary(files, watcher.processes().size(), processes_file, args.command[0]);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitFailed;
}

}  // namespace

void AddRecordCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<RecordArgs>();
  CLI::App* cmd = app.add_subcommand(
      "record",
      "Run a program and record its CUDA activity with CUPTI (kernels, copies, API calls, NVTX, "
      "CUDA graphs) into a .slrec file for `sightline analyze`. Usage: sightline record [options] "
      "-- PROGRAM [ARGS...]");
  cmd->add_option("--capture-range", args->capture_range,
                  "none: record from start to exit; cudaProfilerApi: only between "
                  "cudaProfilerStart and cudaProfilerStop")
      ->check(CLI::IsMember({"none", "cudaProfilerApi"}))
      ->capture_default_str();
  cmd->add_option("--capture-range-end", args->capture_range_end,
                  "After a cudaProfilerStop: stop (record no more windows), repeat (every window) "
                  "or repeat:N (the first N windows)")
      ->capture_default_str();
  cmd->add_option("--ranks", args->ranks,
                  "Record only these ranks (e.g. 0,3,5-7; rank from OMPI_COMM_WORLD_RANK, "
                  "PMI_RANK, SLURM_PROCID or RANK); other ranks run unrecorded");
  cmd->add_option("-o,--output", args->output,
                  "Output path; %p is the process id, %r the rank (0 when unknown)")
      ->capture_default_str();
  cmd->add_option("--buffer-size", args->buffer_size,
                  "CUPTI activity buffer size (default 16M); raise it when records are dropped");
  cmd->add_flag(
      "--driver-api", args->driver_api,
      "Also record every CUDA driver API call (costly in PyTorch: the runtime makes several "
      "per kernel); runtime API calls and the driver's launch calls are always recorded");
  cmd->add_flag("--all-api-calls", args->all_api_calls,
                "Also record calls that only query state (cudaGetDevice, cudaGetLastError, "
                "cuCtxGetCurrent, ...), left out by default");
  cmd->add_option("--cuda-graph-trace", args->cuda_graph_trace,
                  "node: every kernel inside a CUDA graph is recorded (CUPTI adds about 2 us of "
                  "GPU time per node on an H100); graph: one record per graph run, far cheaper, "
                  "its kernels are not seen; sampled:N: every N-th graph launch node by node, "
                  "the others as whole graphs")
      ->capture_default_str();
  CLI::Option* metrics = cmd->add_flag(
      "--gpu-metrics", args->gpu_metrics,
      "Also sample GPU metrics on every GPU the program uses (CUPTI PM sampling; nsys's "
      "--gpu-metrics-devices set and names: GR and SM activity, SM issue, tensor cores, warps, "
      "DRAM, PCIe, NVLink where the GPU has the counters). Device-wide: other processes on the "
      "GPU count too");
  cmd->add_option("--gpu-metrics-frequency", args->gpu_metrics_frequency,
                  "Samples per second with --gpu-metrics (10 to 200000, as nsys)")
      ->check(NumberIn(10, 200000, "10 to 200000", "10-200000"))
      ->needs(metrics)
      ->capture_default_str();
  cmd->add_flag("--cuda-memory-usage", args->cuda_memory_usage,
                "Also record GPU memory allocations and releases (cudaMalloc, cudaMallocAsync and "
                "its pools, static __device__ variables; nsys's --cuda-memory-usage=true), with "
                "the library that asked for each (libnccl.so, libc10_cuda.so, ...). Costs a little "
                "per allocation, nothing per kernel");
  cmd->add_flag(
      "--print-recorder-path", args->print_recorder_path,
      "Print the libsightline_recorder.so that would be injected (SIGHTLINE_RECORDER_LIB, "
      "the build tree, or the install beside this binary) and exit");
  // After `--` every argument is the program's, even ones that look like sightline's options.
  cmd->add_option("program", args->command, "-- PROGRAM [ARGS...]: the program to run");
  cmd->callback([&runner, args] { runner = [args] { return RunRecord(*args); }; });
}

}  // namespace sightline::cli
