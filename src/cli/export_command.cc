// `sightline export TRACE --perfetto -o out.json`: converts any trace Sightline reads into
// Chrome/Perfetto JSON trace events for ui.perfetto.dev. docs/formats/perfetto.md.
#include <cstdio>

#include "base/file_io.h"
#include "cli/commands.h"
#include "exporters/perfetto_json.h"
#include "importers/importer.h"

namespace sightline::cli {
namespace {

struct ExportArgs {
  std::string trace;
  std::string output;
  bool perfetto = false;
};

int RunExport(const ExportArgs& args) {
  if (!args.perfetto) {
    return ReportError(InvalidArgumentError(
        "no export format chosen; usage: sightline export TRACE --perfetto -o out.json"));
  }
  StatusOr<Trace> trace = ImportTrace(args.trace);
  if (!trace.ok()) return ReportError(trace.status());
  PerfettoExportCounts counts;
  const std::string out = ExportPerfettoJson(*trace, &counts);
  if (args.output.empty() || args.output == "-") {
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
  }
  Status s = WriteFileAtomically(args.output, out);
  if (!s.ok()) return ReportError(s);
  std::fprintf(stderr,
               "sightline: wrote %s: %lld kernels, %lld memory operations, %lld API calls, %lld "
               "ranges, %lld launch flows\n",
               args.output.c_str(), static_cast<long long>(counts.kernels),
               static_cast<long long>(counts.memops), static_cast<long long>(counts.api_calls),
               static_cast<long long>(counts.ranges), static_cast<long long>(counts.flows));
  return kExitOk;
}

}  // namespace

void AddExportCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Convert a trace (nsys SQLite export, PyTorch profiler JSON[.gz]) for another viewer: "
      "--perfetto writes Chrome/Perfetto JSON trace events (open in ui.perfetto.dev).");
  cmd->add_option("trace", args->trace, "Trace file; the format is recognised from the content")
      ->required();
  cmd->add_flag("--perfetto", args->perfetto, "Write Chrome/Perfetto JSON trace events");
  cmd->add_option("-o,--output", args->output, "Write to FILE instead of stdout");
  cmd->callback([&runner, args] { runner = [args] { return RunExport(*args); }; });
}

}  // namespace sightline::cli
