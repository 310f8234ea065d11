// `sightline export TRACE --perfetto -o out.json`: converts any trace Sightline reads into
// Chrome/Perfetto JSON trace events for ui.perfetto.dev, with iteration markers and findings as
// annotations. docs/formats/perfetto.md.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "analyses/findings/findings.h"
#include "base/file_io.h"
#include "cli/commands.h"
#include "exporters/perfetto_json.h"
#include "facts/iterations.h"
#include "importers/importer.h"

namespace sightline::cli {
namespace {

struct ExportArgs {
  std::string trace;
  std::string output;
  bool perfetto = false;
  std::string iterations_regex;
  std::vector<std::string> gc_range_names = AnalyzeOptions{}.gc_range_names;
  bool no_annotations = false;
  std::string eager_reference;  // --eager-reference
};

int RunExport(const ExportArgs& args) {
  if (!args.perfetto) {
    return ReportError(InvalidArgumentError(
        "no export format chosen; usage: sightline export TRACE --perfetto -o out.json"));
  }
  std::vector<std::string> inputs = {args.trace};
  if (!args.eager_reference.empty()) inputs.push_back(args.eager_reference);
  if (Status s = CheckOutputIsNotAnInput(args.output, inputs); !s.ok()) return ReportError(s);
  StatusOr<Trace> imported = ImportTrace(args.trace);
  if (!imported.ok()) return ReportError(imported.status());
  std::shared_ptr<const Trace> reference;
  if (!args.eager_reference.empty()) {
    StatusOr<Trace> r = ImportTrace(args.eager_reference);
    if (!r.ok()) return ReportError(r.status());
    reference = std::make_shared<const Trace>(std::move(*r));
  }

  // Annotations: the iterations and findings `sightline analyze` would report, from one context.
  AnalyzeOptions analyze;
  analyze.iterations_regex = args.iterations_regex;
  analyze.gc_range_names = args.gc_range_names;
  RunInputs run;
  run.eager_reference = reference;
  run.eager_reference_path = args.eager_reference;
  AnalysisContext context(*imported, analyze, run);
  const Trace* trace = &context.trace();
  PerfettoExportOptions options;
  options.eager_reference = reference.get();
  std::vector<Finding> findings;
  if (!args.no_annotations) {
    StatusOr<const IterationsResult*> iterations = context.loop().Iterations();
    if (!iterations.ok()) return ReportError(iterations.status());
    StatusOr<std::vector<Finding>> f = ComputeFindings(context);
    if (!f.ok()) return ReportError(f.status());
    findings = std::move(*f);
    options.iterations = *iterations;
    options.findings = &findings;
    options.context = &context;
  }

  PerfettoExportCounts counts;
  if (args.output.empty() || args.output == "-") {
    Status s = WritePerfettoJson(
        *trace, options,
        [](std::string_view chunk) {
          return WriteToStdout(chunk)
                     ? Status::Ok()
                     : OutputError(fmt::format("cannot write to standard output: {}",
                                               std::strerror(StdoutErrno())));
        },
        &counts);
    return s.ok() ? kExitOk : ReportError(s);
  }
  StatusOr<AtomicFileWriter> file = AtomicFileWriter::Open(args.output);
  if (!file.ok()) return ReportError(file.status());
  Status s = WritePerfettoJson(
      *trace, options, [&file](std::string_view chunk) { return file->Append(chunk); }, &counts);
  if (s.ok()) s = file->Commit();
  if (!s.ok()) return ReportError(s);
  std::fprintf(
      stderr, "%s",
      fmt::format("sightline: wrote {}: {} kernels, {} memory operations, {} API calls, "
                  "{} ranges, {} launch flows, {} iterations, {} findings ({} marked "
                  "spans), {} GIL and {} GC slices, {} memory points, {} metric samples, {} graph "
                  "range slices\n",
                  args.output, counts.kernels, counts.memops, counts.api_calls, counts.ranges,
                  counts.flows, counts.iterations, counts.findings, counts.finding_spans,
                  counts.gil_slices, counts.gc_slices, counts.memory_points, counts.metric_samples,
                  counts.graph_range_slices)
          .c_str());
  return kExitOk;
}

}  // namespace

void AddExportCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Convert a trace (nsys SQLite export, PyTorch profiler JSON[.gz]) for another viewer: "
      "--perfetto writes Chrome/Perfetto JSON trace events (open in ui.perfetto.dev), with "
      "iteration markers and the findings of `sightline analyze` as annotation tracks.");
  cmd->add_option("trace", args->trace, "Trace file; the format is recognised from the content")
      ->required();
  cmd->add_flag("--perfetto", args->perfetto, "Write Chrome/Perfetto JSON trace events");
  cmd->add_option("-o,--output", args->output, "Write to FILE instead of stdout");
  AddIterationsOption(cmd, args->iterations_regex, "marked on the timeline");
  cmd->add_option("--gc-ranges", args->gc_range_names,
                  "Names of the host ranges that mark garbage collections, for the GC tracks "
                  "(comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--eager-reference", args->eager_reference,
                  "The same program run eagerly, recorded separately: its eager runs give CUDA "
                  "graph kernels without a capture point (capture before the recorded window) "
                  "and without an eager run in TRACE their ranges (as in `sightline analyze "
                  "--eager-reference`)")
      ->type_name("TRACE");
  cmd->add_flag("--no-annotations", args->no_annotations,
                "Leave out the iteration markers, findings and GIL/GC tracks (the raw timeline "
                "only)");
  cmd->callback([&runner, args] { runner = [args] { return RunExport(*args); }; });
}

}  // namespace sightline::cli
