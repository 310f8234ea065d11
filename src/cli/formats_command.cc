// `sightline formats [FILE...]`: the readers of the front door (importers/inputs.h), in the order
// they are tried; with files, which reader takes each (recognised by content, as analyze does).
#include <fmt/format.h>

#include <memory>

#include "base/utf8.h"
#include "cli/commands.h"
#include "importers/inputs.h"

namespace sightline::cli {
namespace {

struct FormatsArgs {
  std::vector<std::string> files;
};

int RunFormats(const FormatsArgs& args) {
  std::string out;
  if (args.files.empty()) {
    out += "Sightline reads these formats, each plain, gzip'd or zstd'd, recognised by content:\n";
    for (const InputReaderEntry& r : InputReaders()) {
      out += fmt::format("  {:<24} {:<26} {}\n", r.name, InputKindName(r.kind), r.description);
    }
    WriteToStdout(out);
    return kExitOk;
  }
  int rc = kExitOk;
  for (const std::string& f : args.files) {
    StatusOr<RecognisedInput> in = RecogniseInput(f);
    if (!in.ok()) {
      rc = ReportError(in.status());
      continue;
    }
    out += fmt::format("{}: {} ({}{}): {}\n", PrintableText(f), in->reader->name,
                       InputKindName(in->reader->kind),
                       in->compression == Compression::kNone
                           ? ""
                           : fmt::format(", {}", CompressionName(in->compression)),
                       in->reader->description);
  }
  WriteToStdout(out);
  return rc;
}

}  // namespace

void AddFormatsCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<FormatsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "formats",
      "List the input formats Sightline reads; with files, say which reader takes each "
      "(recognised from the content, as analyze does)");
  cmd->add_option("files", args->files, "Files to recognise");
  cmd->callback([&runner, args] { runner = [args] { return RunFormats(*args); }; });
}

}  // namespace sightline::cli
