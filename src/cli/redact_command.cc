// `sightline redact IN -o OUT`: a copy of an nsys export or a recording without the capturing
// machine's user, host, environment and command-line secrets; `sightline redact --check COPY
// --against ORIGINAL`: whether a copy still holds any of them (exit 1 if it does).
// exporters/redact.h.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "base/utf8.h"
#include "cli/commands.h"
#include "exporters/redact.h"

namespace sightline::cli {
namespace {

struct RedactArgs {
  std::string input;
  std::string output;
  std::string check;
  std::string against;
};

int RunCheck(const RedactArgs& args) {
  StatusOr<RedactCheckResult> result = CheckRedactedCopy(args.check, args.against);
  if (!result.ok()) return ReportError(result.status());
  for (const std::string& finding : result->findings) {
    std::printf("%s: %s\n", PrintableText(args.check).c_str(), PrintableText(finding).c_str());
  }
  if (!result->findings.empty()) {
    std::fprintf(stderr,
                 "sightline: %s is not safe to share: %zu finding%s above (what %s holds of %s's "
                 "user, host, environment or command line); make the copy with `sightline "
                 "redact %s -o COPY`\n",
                 PrintableText(args.check).c_str(), result->findings.size(),
                 result->findings.size() == 1 ? "" : "s", PrintableText(args.check).c_str(),
                 PrintableText(args.against).c_str(), PrintableText(args.against).c_str());
    return kExitFailed;
  }
  std::fprintf(stderr,
               "sightline: %s holds none of the %lld names and values learned from %s (%lld "
               "strings and the raw bytes looked at)\n",
               PrintableText(args.check).c_str(), static_cast<long long>(result->learned),
               PrintableText(args.against).c_str(), static_cast<long long>(result->strings));
  return kExitOk;
}

int RunRedact(const RedactArgs& args) {
  if (!args.check.empty() || !args.against.empty()) {
    if (args.check.empty() || args.against.empty()) {
      return ReportError(InvalidArgumentError(
          "redact --check COPY needs --against ORIGINAL (the file the copy was made from: what "
          "it holds of its machine is what the copy is searched for), and --against needs "
          "--check"));
    }
    if (!args.input.empty() || !args.output.empty()) {
      return ReportError(InvalidArgumentError(
          "redact --check COPY --against ORIGINAL reads two files and writes none: give no IN "
          "and no -o with it"));
    }
    return RunCheck(args);
  }
  if (args.input.empty()) {
    return ReportError(InvalidArgumentError(
        "redact needs the file to copy: `sightline redact IN -o OUT`, or `sightline redact "
        "--check COPY --against ORIGINAL`"));
  }
  if (args.output.empty() || args.output == "-") {
    return ReportError(InvalidArgumentError(
        "redact writes a database or a recording: name the copy with -o FILE"));
  }
  if (Status s = CheckOutputIsNotAnInput(args.output, {args.input}); !s.ok()) return ReportError(s);
  StatusOr<RedactSummary> sum = RedactFile(args.input, args.output);
  if (!sum.ok()) return ReportError(sum.status());
  std::string tables;
  if (sum->tables > 0) {
    tables = fmt::format("copied {} tables (left out {} views, triggers and indexes), ",
                         sum->tables, sum->schema_dropped);
  }
  std::fprintf(stderr,
               "sightline: %s -> %s (%s): %sremoved %lld environment values and %lld secrets, "
               "replaced the host name in %lld strings and the user name in %lld, emptied %lld "
               "captured program outputs; the copy holds none of what was learned\n",
               PrintableText(args.input).c_str(), PrintableText(args.output).c_str(),
               sum->format.c_str(), tables.c_str(), static_cast<long long>(sum->environment_values),
               static_cast<long long>(sum->secrets), static_cast<long long>(sum->host_names),
               static_cast<long long>(sum->user_names),
               static_cast<long long>(sum->program_output_values));
  return kExitOk;
}

}  // namespace

void AddRedactCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<RedactArgs>();
  CLI::App* cmd = app.add_subcommand(
      "redact",
      "Copy an Nsight Systems SQLite export or a Sightline recording without what identifies the "
      "machine and its user, to share it (e.g. in a public issue): the user name, the host name "
      "and domain (a pseudonym, the same for every file of one host), the profiled process's "
      "environment, secret values of its command line (--api-key, --hf-token=...), user folders "
      "in paths, the program's captured output; learned from the file and replaced in every "
      "string, in any case. Names of kernels, ranges and threads, times and numbers are kept: the "
      "copy's report equals the original's. `redact --check COPY --against ORIGINAL` searches a "
      "copy for what ORIGINAL holds of its machine (exit 1 when it finds any)");
  cmd->add_option("input", args->input, "The export (.sqlite, also gzip'd or zstd'd) or recording");
  cmd->add_option("-o,--output", args->output, "The copy (never the input)");
  cmd->add_option("--check", args->check, "A copy to search, with --against")->option_text("COPY");
  cmd->add_option("--against", args->against,
                  "The original whose user, host, environment and command-line secrets --check "
                  "searches the copy for")
      ->option_text("ORIGINAL");
  cmd->callback([&runner, args] { runner = [args] { return RunRedact(*args); }; });
}

}  // namespace sightline::cli
