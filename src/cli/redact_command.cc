// `sightline redact IN -o OUT`: a copy of an nsys export or a recording without the capturing
// machine's environment, host name, user name and user paths (exporters/redact.h).
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "exporters/redact.h"

namespace sightline::cli {
namespace {

struct RedactArgs {
  std::string input;
  std::string output;
};

int RunRedact(const RedactArgs& args) {
  if (args.output.empty() || args.output == "-") {
    return ReportError(InvalidArgumentError(
        "redact writes a database or a recording: name the copy with -o FILE"));
  }
  if (Status s = CheckOutputIsNotAnInput(args.output, {args.input}); !s.ok()) return ReportError(s);
  StatusOr<RedactSummary> sum = RedactFile(args.input, args.output);
  if (!sum.ok()) return ReportError(sum.status());
  std::fprintf(stderr,
               "sightline: %s -> %s (%s): removed %lld environment values, replaced %lld host "
               "names and %lld user names or paths, emptied %lld captured program outputs\n",
               args.input.c_str(), args.output.c_str(), sum->format.c_str(),
               static_cast<long long>(sum->environment_values),
               static_cast<long long>(sum->host_names), static_cast<long long>(sum->user_paths),
               static_cast<long long>(sum->program_output_values));
  return kExitOk;
}

}  // namespace

void AddRedactCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<RedactArgs>();
  CLI::App* cmd = app.add_subcommand(
      "redact",
      "Copy an Nsight Systems SQLite export or a Sightline recording without what identifies the "
      "machine and its user, to share it (e.g. in a public issue): the profiled process's "
      "environment, the host name (a pseudonym, the same for every file of one host), the user "
      "name and user folders in paths, the program's captured output. Everything an analysis "
      "reads is kept: the copy's report equals the original's");
  cmd->add_option("input", args->input, "The export (.sqlite, also gzip'd or zstd'd) or recording")
      ->required();
  cmd->add_option("-o,--output", args->output, "The copy (never the input)")->required();
  cmd->callback([&runner, args] { runner = [args] { return RunRedact(*args); }; });
}

}  // namespace sightline::cli
