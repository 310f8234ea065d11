// `sightline ncu REPORT.csv [MORE.csv...]`: reads Nsight Compute CSV exports, classifies each
// kernel (compute-, memory- or latency-bound), explains stalls and rules, and puts several exports
// side by side. docs/kernel/ncu.md.
#include <fmt/format.h>

#include <cstdio>
#include <variant>

#include "base/file_io.h"
#include "cli/commands.h"
#include "importers/inputs.h"
#include "kernel/ncu_report.h"
#include "reporters/reporter.h"

namespace sightline::cli {
namespace {

struct NcuArgs {
  std::vector<std::string> files;
  std::string format = "text";
  std::string output;
  int top = 10;
  std::vector<std::string> pairs;  // OLD=NEW
};

int RunNcu(const NcuArgs& args) {
  if (args.files.empty()) {
    return ReportError(InvalidArgumentError(
        "no export given; usage: sightline ncu REPORT.csv [AFTER.csv...] (from ncu --csv "
        "--page details or --page raw)"));
  }
  std::vector<NcuExport> exports;
  std::vector<NcuSourceExport> sources;
  if (Status s = CheckOutputIsNotAnInput(args.output, args.files); !s.ok()) return ReportError(s);
  for (const std::string& f : args.files) {
    // The details/raw pages and the source page are told apart by their content.
    StatusOr<RecognisedInput> in = RecogniseInput(f);
    StatusOr<InputDocument> doc =
        in.ok() && in->reader->kind == InputKind::kNcuSource
            ? ReadRecognisedInput(*in)
            : OpenInputOfKind(f, InputKind::kNcuExport, "`sightline ncu`");
    if (!doc.ok()) return ReportError(doc.status());
    if (NcuSourceExport* src = std::get_if<NcuSourceExport>(&doc->value)) {
      sources.push_back(std::move(*src));
    } else {
      exports.push_back(std::move(std::get<NcuExport>(doc->value)));
    }
  }
  NcuReportOptions options;
  options.top = args.top;
  for (const std::string& p : args.pairs) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size()) {
      return ReportError(
          InvalidArgumentError("--pair takes OLD=NEW (kernel short names), got '" + p + "'"));
    }
    options.pairs.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  Report report = BuildNcuReport(GroupNcuExports(std::move(exports)), options);
  AddNcuSourceSections(report, sources, args.top);
  const std::string out =
      args.format == "json" ? RenderJsonReport(report) : RenderTextReport(report);
  if (args.output.empty() || args.output == "-") {
    WriteToStdout(out);
    return kExitOk;
  }
  Status s = WriteFileAtomically(args.output, out);
  return s.ok() ? kExitOk : ReportError(s);
}

}  // namespace

void AddNcuCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<NcuArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ncu",
      "Read Nsight Compute CSV exports (ncu --csv --page details|raw, any --set): per kernel "
      "duration, throughputs, occupancy and block limits, a compute/memory/latency-bound "
      "verdict, stall reasons, ncu's rules and hints; several exports side by side.");
  cmd->add_option("exports", args->files,
                  "CSV exports (.csv or .csv.gz); a details and a raw export of the same report "
                  "are merged, other files are compared side by side; source-page exports "
                  "(--page source --print-source sass|cuda,sass) get the hottest instructions "
                  "and lines");
  cmd->add_option("--format", args->format, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "Write the report to FILE instead of stdout");
  cmd->add_option("--pair", args->pairs,
                  "OLD=NEW: compare kernel NEW of a later export with kernel OLD of the first "
                  "(short names; repeatable). Without it, kernels pair by name, or by launch "
                  "order when the exports hold as many kernels and the names differ")
      ->allow_extra_args(false);  // one pair per --pair, so exports may follow it
  cmd->add_option("--top", args->top, "Kernels (longest first) shown in detail per export")
      ->check(PositiveCount<int>())
      ->capture_default_str();
  cmd->callback([&runner, args] { runner = [args] { return RunNcu(*args); }; });
}

}  // namespace sightline::cli
