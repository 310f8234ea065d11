// `sightline diff BASELINE CANDIDATE` (or `A1 A2 -- B1 B2`, or `--baseline FILE B...`): compares
// runs of the same workload (any formats Sightline reads): the verdict on the step time, then per
// kernel, category, range and iteration; --fail-if-slower gates CI. docs/analyses/diff.md.
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/utf8.h"
#include "cli/commands.h"
#include "pipeline/pipeline.h"
#include "reporters/reporter.h"

namespace sightline::cli {
namespace {

struct DiffArgs {
  std::vector<std::string> inputs;          // BASELINE CANDIDATE, or the baseline's runs
  std::vector<std::string> candidate_runs;  // after "--"
  std::string saved_baseline;               // --baseline FILE
  std::string output;
  std::string format = "text";
  std::string iterations_regex;
  int top_n = 0;  // 0: the format's default
  std::optional<double> fail_if_slower_pct;
  double min_share_pct = 1.0;
};

// The two sides from the command line: `A B` (each may be a directory of runs), `A1 A2 -- B1 B2`,
// or `--baseline FILE B1 B2`.
Status SplitSides(const DiffArgs& args, std::vector<std::string>& baseline,
                  std::vector<std::string>& candidate) {
  if (!args.saved_baseline.empty()) {
    if (!args.candidate_runs.empty()) {
      return InvalidArgumentError(
          "with --baseline FILE give only the candidate's traces: `sightline diff --baseline "
          "FILE B1 B2`, no \"--\"");
    }
    if (args.inputs.empty()) {
      return InvalidArgumentError("--baseline FILE needs the candidate's traces after it");
    }
    candidate = args.inputs;
    return Status::Ok();
  }
  if (!args.candidate_runs.empty()) {
    baseline = args.inputs;
    candidate = args.candidate_runs;
    if (baseline.empty()) {
      return InvalidArgumentError("no baseline run before \"--\": `sightline diff A1 A2 -- B1 B2`");
    }
    return Status::Ok();
  }
  if (args.inputs.size() != 2) {
    return InvalidArgumentError(fmt::format(
        "diff takes a baseline and a candidate, got {} input(s); for several runs per side write "
        "`sightline diff A1 A2 -- B1 B2` or give a directory per side",
        args.inputs.size()));
  }
  baseline = {args.inputs[0]};
  candidate = {args.inputs[1]};
  return Status::Ok();
}

int RunDiff(const DiffArgs& args) {
  AnalyzeOptions options;
  options.iterations_regex = args.iterations_regex;
  options.diff.min_share_pct = args.min_share_pct;
  options.diff.fail_if_slower_pct = args.fail_if_slower_pct;
  options.top_n = args.top_n > 0 ? args.top_n : (args.format == "json" ? 100 : 15);
  std::vector<std::string> baseline, candidate;
  if (Status s = SplitSides(args, baseline, candidate); !s.ok()) return ReportError(s);
  std::vector<std::string> all = baseline;
  all.insert(all.end(), candidate.begin(), candidate.end());
  if (!args.saved_baseline.empty()) all.push_back(args.saved_baseline);
  if (Status s = CheckOutputIsNotAnInput(args.output, all); !s.ok()) return ReportError(s);
  StatusOr<Report> report = args.saved_baseline.empty()
                                ? DiffRuns(baseline, candidate, options)
                                : DiffAgainstBaseline(args.saved_baseline, candidate, options);
  if (!report.ok()) return ReportError(report.status());

  const std::string out =
      args.format == "json" ? RenderJsonReport(*report) : RenderTextReport(*report);
  if (args.output.empty() || args.output == "-") {
    WriteToStdout(out);
  } else {
    Status s = WriteFileAtomically(args.output, out);
    if (!s.ok()) return ReportError(s);
  }
  if (!report->gate.failed && !report->gate.undecided) return kExitOk;
  // CI logs show stderr even when the report goes to a file: say what failed there too.
  std::fprintf(stderr, "sightline: diff: %s\n",
               PrintableText(report->gate.message, /*keep_line_breaks=*/true).c_str());
  return report->gate.failed ? kExitFailed : kExitCannotTell;
}

}  // namespace

void AddDiffCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Compare a baseline and a candidate of the same workload (also an nsys export against a "
      "PyTorch trace): a verdict on the step time with its 95% interval and where the change "
      "went, then per kernel, category, NVTX range and iteration. Several runs per side: "
      "`diff A1 A2 -- B1 B2` or a directory per side; a saved baseline may stand for runs on "
      "either side (`diff --baseline FILE B1 ...`, `diff A.baseline.json -- B.baseline.json`). "
      "Two serving results (or several per side) compare their latency percentiles and "
      "throughput. --fail-if-slower PCT: exit 1 slower, 0 not slower, 4 cannot tell.");
  cmd->add_option("inputs", args->inputs,
                  "BASELINE CANDIDATE (traces, serving results, saved baselines, or directories "
                  "of runs); or the baseline's runs followed by -- and the candidate's; with "
                  "--baseline, the candidate's runs")
      ->type_name("TRACE...");
  cmd->add_option(kDiffCandidateRunsOption, args->candidate_runs,
                  "The candidate's runs (what follows \"--\")")
      ->expected(1, -1)
      ->group("");
  cmd->add_option("--baseline", args->saved_baseline,
                  "Compare the traces against a baseline saved by `sightline baseline save` "
                  "(docs/formats/baseline.md) instead of a baseline trace")
      ->type_name("FILE");
  cmd->add_option("-o,--output", args->output, "Write the report to FILE instead of stdout");
  cmd->add_option("--format", args->format, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--top", args->top_n,
                  "Rows kept in each long table; default 15 for text, 100 for JSON")
      ->check(PositiveCount<int>());
  cmd->add_option(
         "--fail-if-slower", args->fail_if_slower_pct,
         "The gate. With iterations on both sides it reads the 95% intervals of the change in "
         "median step time (left out when it is host noise: one run on a side, the GPU busy "
         "under half the step) and in median GPU time launched per iteration: exit 1 when "
         "either lies wholly above PCT percent, 0 when both lie at or below it, 4 (cannot "
         "tell) otherwise or when a side has fewer than 5 iterations; each loop of a trace "
         "(graph_step_N, eager_step_N) on its own, slower if any is. Without iterations: "
         "exit 1 when GPU time, or a kernel holding at least --min-share percent of the "
         "baseline's GPU time, grew by more than PCT percent (sums, no interval)")
      ->type_name("PCT")
      ->check(NumberIn(0, std::numeric_limits<double>::max(), "0 or more", "NONNEGATIVE"));
  cmd->add_option("--min-share", args->min_share_pct,
                  "Kernels below this share (percent) of the baseline's GPU time are not gated "
                  "one by one (the sums gate)")
      ->type_name("PCT")
      ->check(Percent())
      ->capture_default_str();
  AddIterationsOption(cmd, args->iterations_regex, "with a saved baseline, its regex by default");
  cmd->callback([&runner, args] { runner = [args] { return RunDiff(*args); }; });
}

}  // namespace sightline::cli
