// `sightline baseline save NAME TRACES...`: keeps what a later `sightline diff --baseline NAME
// TRACE...` needs (each run's per-iteration figures, not the traces) in a small JSON file
// (diff/baseline_file.h, docs/formats/baseline.md).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "cli/commands.h"
#include "diff/baseline_file.h"
#include "pipeline/pipeline.h"

namespace sightline::cli {
namespace {

struct BaselineSaveArgs {
  std::string name;
  std::vector<std::string> traces;
  std::string iterations_regex;
};

int RunBaselineSave(const BaselineSaveArgs& args) {
  if (args.name.empty() || args.name == "-") {
    return ReportError(InvalidArgumentError(
        "baseline save writes a file: name it, e.g. `sightline baseline save main.baseline.json "
        "run1.json.gz run2.json.gz`"));
  }
  if (Status s = CheckOutputIsNotAnInput(args.name, args.traces); !s.ok()) return ReportError(s);
  AnalyzeOptions options;
  options.iterations_regex = args.iterations_regex;
  std::vector<std::string> files;
  StatusOr<SavedBaseline> saved = CollectBaseline(args.traces, options, &files);
  if (!saved.ok()) return ReportError(saved.status());
  if (Status s = WriteFileAtomically(args.name, SerializeBaseline(*saved)); !s.ok()) {
    return ReportError(s);
  }
  size_t iterations = 0;
  for (const RunSamples& run : saved->runs) iterations += run.iterations();
  std::fprintf(stderr, "sightline: baseline: %s: %zu run(s), %zu iterations ('%s')\n",
               args.name.c_str(), saved->runs.size(), iterations, saved->runs[0].pattern.c_str());
  return kExitOk;
}

}  // namespace

void AddBaselineCommand(CLI::App& app, CommandRunner& runner) {
  CLI::App* cmd = app.add_subcommand(
      "baseline",
      "Saved baselines for `sightline diff --baseline`: the per-iteration figures of reference "
      "runs in a small file, so CI need not keep their traces");
  cmd->require_subcommand(1);
  auto args = std::make_shared<BaselineSaveArgs>();
  CLI::App* save = cmd->add_subcommand(
      "save",
      "Write NAME (a JSON file, docs/formats/baseline.md) with each trace's iterations: wall "
      "time and its parts (GPU work by range and category, GPU idle by host activity). Every "
      "trace must have iterations; several traces are several runs");
  save->add_option("name", args->name, "The file to write (never one of the traces)")
      ->required()
      ->type_name("NAME");
  save->add_option("traces", args->traces, "The reference runs: traces or directories of them")
      ->required()
      ->type_name("TRACE...");
  AddIterationsOption(save, args->iterations_regex, "kept in the file for later diffs");
  save->callback([&runner, args] { runner = [args] { return RunBaselineSave(*args); }; });
}

}  // namespace sightline::cli
