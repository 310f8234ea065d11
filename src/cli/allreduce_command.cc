// `sightline allreduce tune|plot|bench`: turn an all-reduce sweep CSV into a C++ lookup table and
// heatmaps, and start the GPU harness that measures the sweep. docs/allreduce.md.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <variant>

#include "allreduce/lut_codegen.h"
#include "allreduce/lut_tune.h"
#include "allreduce/sweep_plot.h"
#include "base/file_io.h"
#include "cli/commands.h"
#include "importers/allreduce_sweep/sweep_csv.h"
#include "importers/inputs.h"

namespace sightline::cli {
namespace {

constexpr const char* kBenchName = "sightline-allreduce-bench";

// Sweeps through the front door (importers/inputs.h), concatenated; a cell measured in two files
// is an error.
StatusOr<std::vector<SweepRow>> ReadSweeps(const std::vector<std::string>& files) {
  std::vector<SweepRow> all;
  for (const std::string& f : files) {
    ASSIGN_OR_RETURN(InputDocument doc,
                     OpenInputOfKind(f, InputKind::kAllreduceSweep, "`sightline allreduce`"));
    for (SweepRow& r : std::get<SweepRows>(doc.value)) all.push_back(std::move(r));
  }
  RETURN_IF_ERROR(CheckSweepDuplicates(all));
  return all;
}

struct TuneArgs {
  std::vector<std::string> files;
  std::string output;
  std::string mode = "graph";
  std::string dtype = "bf16";
  double noise_pct = 3;
};

int RunTune(const TuneArgs& args) {
  if (!args.output.empty()) {
    if (Status s = CheckOutputIsNotAnInput(args.output, args.files); !s.ok()) return ReportError(s);
  }
  StatusOr<std::vector<SweepRow>> rows = ReadSweeps(args.files);
  if (!rows.ok()) return ReportError(rows.status());
  TuneOptions options;
  options.mode = args.mode == "eager" ? ArMode::kEager : ArMode::kGraph;
  options.dtype = args.dtype;
  options.noise_pct = args.noise_pct;
  StatusOr<TuneResult> result = TuneAllReduce(*rows, options);
  if (!result.ok()) return ReportError(result.status().WithPrefix(args.files.front()));
  const std::string summary = RenderTuneSummary(*result);
  if (args.output.empty()) {  // the summary and the cost model only
    WriteToStdout(summary);
    return kExitOk;
  }
  if (Status s = CheckHasTables(*result); !s.ok()) {
    return ReportError(s.WithPrefix(args.files.front()));
  }
  const std::string header = GenerateLutHeader(*result, args.files);
  if (Status s = WriteFileAtomically(args.output, header); !s.ok()) return ReportError(s);
  WriteToStdout(summary);
  std::printf("\nwrote %s (%zu table(s); sightline::allreduce::SelectStrategy)\n",
              args.output.c_str(), result->tables.size());
  return kExitOk;
}

struct PlotArgs {
  std::vector<std::string> files;
  std::string dir;
};

int RunPlot(const PlotArgs& args) {
  StatusOr<std::vector<SweepRow>> rows = ReadSweeps(args.files);
  if (!rows.ok()) return ReportError(rows.status());
  StatusOr<std::vector<PlotFile>> files = PlotSweep(*rows, args.files);
  if (!files.ok()) return ReportError(files.status().WithPrefix(args.files.front()));
  // The directory's parents are made; the files themselves appear together or not at all (a full
  // disk leaves none of them).
  const std::filesystem::path parent = std::filesystem::path(args.dir).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) {
    return ReportError(OutputError(
        fmt::format("{}: cannot create the output directory: {}", args.dir, ec.message())));
  }
  std::vector<std::pair<std::string, std::string>> contents;
  for (const PlotFile& f : *files) contents.emplace_back(f.name, f.contents);
  if (Status s = WriteFilesAtomically(args.dir, contents); !s.ok()) return ReportError(s);
  std::printf("wrote %zu files to %s; open %s\n", files->size(), args.dir.c_str(),
              (std::filesystem::path(args.dir) / "index.html").c_str());
  return kExitOk;
}

bool IsExecutable(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

// SIGHTLINE_ALLREDUCE_BENCH, then beside this binary as built (build/src/sightline ->
// build/cuda/allreduce/) or installed (same directory), then PATH. `looked` lists the places.
std::string FindBench(std::vector<std::string>& looked) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path dir = self.parent_path();
    for (const std::filesystem::path& p :
         {dir / ".." / "cuda" / "allreduce" / kBenchName, dir / kBenchName}) {
      const std::string candidate = p.lexically_normal().string();
      looked.push_back(candidate);
      if (IsExecutable(candidate)) return candidate;
    }
  }
  looked.push_back("PATH");
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (dir.empty()) continue;
      const std::string candidate = std::string(dir) + "/" + kBenchName;
      if (IsExecutable(candidate)) return candidate;
    }
  }
  return "";
}

int RunBench(const std::vector<std::string>& bench_args) {
  std::string binary;
  std::vector<std::string> looked;
  if (const char* env = std::getenv("SIGHTLINE_ALLREDUCE_BENCH"); env != nullptr && *env) {
    binary = env;
    if (!IsExecutable(binary)) {
      return ReportError(NotFoundError(
          fmt::format("SIGHTLINE_ALLREDUCE_BENCH={} is not an executable file; point it at the "
                      "{} binary or unset it",
                      binary, kBenchName)));
    }
  } else {
    binary = FindBench(looked);
  }
  if (binary.empty()) {
    std::string places;
    for (const std::string& l : looked) places += "\n  " + l;
    return ReportError(NotFoundError(fmt::format(
        "{} not found; looked in:{}\nIt is the GPU harness, built with the GPU parts when the CUDA "
        "toolkit, NCCL and MPI are present (cmake -S . -B build, or on a GPU machine with only "
        "the CUDA toolkit: cmake -S cuda -B build-gpu && cmake --build build-gpu), into "
        "<build>/cuda/allreduce/. Set SIGHTLINE_ALLREDUCE_BENCH to its path if it lives "
        "elsewhere. Run it with one process per GPU: mpirun -n 2 sightline allreduce bench ...",
        kBenchName, places)));
  }
  std::vector<char*> argv;
  argv.push_back(binary.data());
  std::vector<std::string> copy = bench_args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execv(binary.c_str(), argv.data());
  return ReportError(IoError(fmt::format("cannot run {}: {}", binary, std::strerror(errno))));
}

}  // namespace

void AddAllReduceCommand(CLI::App& app, CommandRunner& runner) {
  CLI::App* group = app.add_subcommand(
      "allreduce",
      "All-reduce tuning: run the GPU sweep (bench), turn the sweep CSV into a C++ lookup table "
      "(tune) and heatmaps (plot).");
  group->require_subcommand(1);

  auto tune = std::make_shared<TuneArgs>();
  CLI::App* t = group->add_subcommand(
      "tune",
      "Write a self-contained C++ header whose SelectStrategy(world_size, fusion, hidden_size, "
      "num_tokens) returns the fastest strategy of the nearest measured cell (NCCL outside the "
      "grid), and print what the table and the latency-bandwidth cost model each lose against "
      "the best per cell. Without -o: only the summary (1-D size sweeps need no grid).");
  t->add_option("sweeps", tune->files, "Sweep CSV files from sightline allreduce bench")
      ->required();
  t->add_option("-o,--output", tune->output,
                "The header to write (e.g. allreduce_lut.h); needs 2-D sweep rows");
  t->add_option("--mode", tune->mode, "Which timings to tune for: CUDA-graph replay or eager")
      ->check(CLI::IsMember({"graph", "eager"}))
      ->capture_default_str();
  t->add_option("--dtype", tune->dtype, "Which dtype's rows to tune for")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}))
      ->capture_default_str();
  t->add_option("--noise-pct", tune->noise_pct,
                "A cell whose runner-up is within this % of the best counts as a close call")
      ->check(Percent())
      ->capture_default_str();
  t->callback([&runner, tune] { runner = [tune] { return RunTune(*tune); }; });

  auto plot = std::make_shared<PlotArgs>();
  CLI::App* p = group->add_subcommand(
      "plot",
      "Draw the sweep as SVG: per world size, dtype, fusion and mode, time heatmaps per "
      "strategy, the best-strategy map and % slower than the best; size-sweep line charts; "
      "an index.html.");
  p->add_option("sweeps", plot->files, "Sweep CSV files")->required();
  p->add_option("-o,--output", plot->dir, "Directory to write (created if missing)")->required();
  p->callback([&runner, plot] { runner = [plot] { return RunPlot(*plot); }; });

  CLI::App* b = group->add_subcommand(
      "bench",
      "Run the GPU all-reduce harness (sightline-allreduce-bench), passing every argument "
      "through; launch with one process per GPU: mpirun -n 2 sightline allreduce bench ...");
  b->prefix_command();
  b->set_help_flag();  // --help goes to the harness
  b->callback([&runner, b] { runner = [args = b->remaining()] { return RunBench(args); }; });
}

}  // namespace sightline::cli
