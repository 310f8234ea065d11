// `sightline findings [--list]`: the finding rules of the registry (analyses/findings/findings.h),
// each with the input it needs and what it finds. Thresholds and estimates:
// docs/analyses/findings.md.
#include <fmt/format.h>

#include <string>

#include "analyses/findings/findings.h"
#include "cli/commands.h"

namespace sightline::cli {
namespace {

int RunFindingsList() {
  std::string out = fmt::format("{:<24} {:<15} {}\n", "rule", "needs", "finds");
  for (const FindingRule& rule : FindingRules()) {
    out += fmt::format("{:<24} {:<15} {}\n", rule.id, FindingRuleInput(rule), rule.summary);
  }
  WriteToStdout(out);
  return kExitOk;
}

}  // namespace

void AddFindingsCommand(CLI::App& app, CommandRunner& runner) {
  CLI::App* cmd = app.add_subcommand(
      "findings",
      "List the finding rules `analyze` runs: each rule's id, the input it needs (a trace, the "
      "ranks of a job, serving results with --requests, with or beside the serving trace, a "
      "TensorRT engine's exports) and what it finds; thresholds and estimates in "
      "docs/analyses/findings.md");
  static const std::string kListHelp = "List the rules (what the command does without options too)";
  cmd->add_flag("--list", kListHelp);
  cmd->callback([&runner] { runner = [] { return RunFindingsList(); }; });
}

}  // namespace sightline::cli
