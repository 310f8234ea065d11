// `sightline diff BASELINE CANDIDATE`: compares two traces of the same workload (any formats
// Sightline reads) per kernel, category, range and iteration; --fail-if-slower gates CI.
// docs/analyses/diff.md.
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "base/file_io.h"
#include "cli/commands.h"
#include "pipeline/pipeline.h"
#include "reporters/reporter.h"

namespace sightline::cli {
namespace {

struct DiffArgs {
  std::string baseline, candidate;
  std::string output;
  std::string format = "text";
  std::string iterations_regex;
  int top_n = 0;  // 0: the format's default
  std::optional<double> fail_if_slower_pct;
  double min_share_pct = 1.0;
};

int RunDiff(const DiffArgs& args) {
  AnalyzeOptions options;
  options.iterations_regex = args.iterations_regex;
  options.diff_min_share_pct = args.min_share_pct;
  options.diff_fail_if_slower_pct = args.fail_if_slower_pct;
  options.top_n = args.top_n > 0 ? args.top_n : (args.format == "json" ? 100 : 15);
  if (Status s = CheckOutputIsNotAnInput(args.output, {args.baseline, args.candidate}); !s.ok()) {
    return ReportError(s);
  }
  StatusOr<Report> report = DiffFiles(args.baseline, args.candidate, options);
  if (!report.ok()) return ReportError(report.status());

  const std::string out =
      args.format == "json" ? RenderJsonReport(*report) : RenderTextReport(*report);
  if (args.output.empty() || args.output == "-") {
    WriteToStdout(out);
  } else {
    Status s = WriteFileAtomically(args.output, out);
    if (!s.ok()) return ReportError(s);
  }
  if (!report->gate.failed) return kExitOk;
  // CI logs show stderr even when the report goes to a file: name what failed there too.
  std::fprintf(stderr, "sightline: diff: %s\n", report->gate.message.c_str());
  return kExitFailed;
}

}  // namespace

void AddDiffCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Compare two traces of the same workload (also an nsys export against a PyTorch trace): "
      "per kernel, category, NVTX range and iteration; largest regressions first. "
      "--fail-if-slower PCT exits 1 when GPU time or a kernel grew by more than PCT percent.");
  cmd->add_option("baseline", args->baseline, "The trace before the change")->required();
  cmd->add_option("candidate", args->candidate, "The trace after the change")->required();
  cmd->add_option("-o,--output", args->output, "Write the report to FILE instead of stdout");
  cmd->add_option("--format", args->format, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--top", args->top_n,
                  "Rows kept in each long table; default 15 for text, 100 for JSON")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--fail-if-slower", args->fail_if_slower_pct,
                  "Exit 1 when GPU time, or the time of a kernel holding at least --min-share "
                  "percent of the baseline's GPU time, grew by more than PCT percent")
      ->type_name("PCT")
      ->check(FiniteNumber())
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-share", args->min_share_pct,
                  "Kernels below this share (percent) of the baseline's GPU time are not gated "
                  "one by one")
      ->type_name("PCT")
      ->check(FiniteNumber())
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--iterations", args->iterations_regex,
                  "Regex (RE2 syntax, full match) naming the iteration ranges; default finds "
                  "iteration*, step*, ProfilerStep#N");
  cmd->callback([&runner, args] { runner = [args] { return RunDiff(*args); }; });
}

}  // namespace sightline::cli
