// sightline: command-line entry point. Subcommands live in one file each (cli/*_command.cc).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/exceptions.h"
#include "base/threads.h"
#include "cli/commands.h"

namespace {

// Trace tables are large, freshly allocated vectors; on virtual machines the 4 KiB page faults of
// filling them dominate import time (bench/run_benchmarks.sh measured 15.3 s -> 8.6 s for a
// 10^7-kernel nsys export with transparent huge pages). Blocks are also not given their own
// mappings (mmap_max=0): a freed block's memory is then reused by the next one instead of being
// unmapped and faulted in again (same export, 3 alternating runs on a shared 2-core VM: 13.4 ->
// 12.4 s CPU, 9.9 -> 9.0 s wall, same peak RSS). glibc reads its malloc tunables only at start-up,
// so the process re-executes itself once with them set. The user's own GLIBC_TUNABLES, or
// SIGHTLINE_NO_HUGEPAGES=1, leaves everything as it is.
void ReexecWithHugePageMalloc(char** argv) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr ||
      std::getenv("SIGHTLINE_NO_HUGEPAGES") != nullptr) {
    return;
  }
  // `record` and `allreduce bench` run other programs, which must inherit the user's environment
  // unchanged.
  if (argv[1] != nullptr &&
      (std::string_view(argv[1]) == "record" || std::string_view(argv[1]) == "allreduce")) {
    return;
  }
  if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0", 0) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GLIBC_TUNABLES");  // exec failed: carry on in this process
}

int Main(int argc, char** argv) {
  CLI::App app{
      "Sightline: performance analysis of LLM inference on NVIDIA GPUs.\n"
      "Reads Nsight Systems SQLite exports and PyTorch profiler traces and says where the time "
      "goes."};
  app.set_version_flag("--version", std::string("sightline ") + SIGHTLINE_VERSION);
  app.require_subcommand(1);
  sightline::cli::CommandRunner runner;
  sightline::cli::AddAnalyzeCommand(app, runner);
  sightline::cli::AddOccupancyCommand(app, runner);
  sightline::cli::AddNcuCommand(app, runner);
  sightline::cli::AddExportCommand(app, runner);
  sightline::cli::AddAllReduceCommand(app, runner);
  sightline::cli::AddRecordCommand(app, runner);
  sightline::cli::AddDiffCommand(app, runner);
  sightline::cli::AddBaselineCommand(app, runner);
  sightline::cli::AddFormatsCommand(app, runner);
  sightline::cli::AddFindingsCommand(app, runner);
  sightline::cli::AddRedactCommand(app, runner);
  sightline::cli::AddQueryCommand(app, runner);
  sightline::cli::AddCheckClaimsCommand(app, runner);
  sightline::cli::AddMcpCommand(app, runner);
  // `diff A1 A2 -- B1 B2`: the first "--" after `diff` starts the candidate's runs (commands.h).
  std::vector<char*> args(argv, argv + argc);
  std::string candidate_runs = sightline::cli::kDiffCandidateRunsOption;
  if (argc > 1 && std::string_view(argv[1]) == "diff") {
    for (size_t i = 2; i < args.size(); ++i) {
      if (std::string_view(args[i]) == "--") {
        args[i] = candidate_runs.data();
        break;
      }
    }
  }
  int rc = 0;
  try {
    app.parse(static_cast<int>(args.size()), args.data());
    rc = runner ? runner() : 0;
  } catch (const CLI::CallForHelp& e) {
    rc = app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    rc = app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    rc = app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    rc = sightline::cli::kExitUsage;
  } catch (const CLI::Error& e) {
    rc = app.exit(e);
  } catch (...) {
    // Out of memory (std::bad_alloc) or a resource the system refused (std::system_error) in any
    // command: what happened and what to do, exit 2, never an abort. Outputs being written were
    // abandoned on the way here, so none is left half-written.
    rc = sightline::cli::ReportError(sightline::StatusOfException(std::current_exception()));
  }
  // A report that did not reach standard output (a full disk, /dev/full, a closed descriptor) is
  // a failed run, never exit 0.
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (!flushed || std::ferror(stdout) || sightline::cli::StdoutErrno() != 0) {
    // The first failure's cause: a write in the run (WriteToStdout), else the flush's.
    int err = sightline::cli::StdoutErrno();
    if (err == 0) err = !flushed && flush_errno != 0 ? flush_errno : EIO;
    std::fprintf(stderr, "sightline: error: cannot write to standard output: %s\n",
                 std::strerror(err));
    return sightline::cli::kExitOutput;
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  ReexecWithHugePageMalloc(argv);
  // Under a small stack limit (ulimit -s 128) the commands run on a thread with the usual 8 MiB,
  // and every thread gets at least that (a Kineto import alone needs about 180 KiB).
  return sightline::RunWithEnoughStack([&] { return Main(argc, argv); });
}
