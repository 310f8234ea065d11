#include "importers/importer.h"

#include <fmt/format.h>

#include "base/file_io.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/recorder/recorder_importer.h"
#include "importers/torch_snapshot/torch_snapshot_importer.h"

namespace sightline {
namespace {

bool HasEvents(const Trace& t) {
  return t.kernels.size() + t.memops.size() + t.api_calls.size() + t.ranges.size() + t.gil.size() +
             t.counters.size() + t.memory_events.size() + t.os_calls.size() + t.off_cpu.size() +
             t.py_samples.size() >
         0;
}

}  // namespace

Status CheckTraceUsable(const Trace& trace, const std::string& path) {
  if (HasEvents(trace)) return Status::Ok();
  bool dropped = false;
  std::string what;
  for (const Diagnostic& d : trace.diagnostics.items()) {
    dropped |= d.severity() == DiagnosticSeverity::kWarning;
    what += fmt::format("\n  - {} {}: {}", d.count, d.code(), d.text());
  }
  if (!dropped) return Status::Ok();
  return InvalidInputError(fmt::format(
      "{}: nothing usable is left in this trace: every event was dropped. What was dropped "
      "(docs/diagnostics.md explains each code):{}\nCheck that the file is the tool's own, "
      "complete output (not edited or damaged), or record it again",
      path, what));
}

const std::vector<ImporterEntry>& Importers() {
  static const std::vector<ImporterEntry> kImporters = {
      {"nsys-sqlite", "Nsight Systems SQLite export (nsys export --type sqlite)", &SniffNsysSqlite,
       &ImportNsysSqlite},
      {"kineto-json", "PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip'd",
       &SniffKinetoJson, &ImportKinetoJson},
      {"sightline-recorder", "sightline record file (.slrec)", &SniffRecorderFile,
       &ImportRecorderFile},
      {"torch-memory-snapshot",
       "PyTorch memory snapshot (torch.cuda.memory._dump_snapshot, a plain-data pickle)",
       &SniffTorchSnapshot, &ImportTorchSnapshot},
  };
  return kImporters;
}

StatusOr<Trace> ImportTrace(const std::string& path, const ImportOptions& options) {
  ASSIGN_OR_RETURN(std::string head, ReadFilePrefix(path, 4096));
  if (head.empty()) {
    return InvalidInputError(fmt::format(
        "{}: the file is empty; expected an nsys SQLite export or a PyTorch profiler JSON trace",
        path));
  }
  for (const ImporterEntry& importer : Importers()) {
    if (!importer.sniff(head)) continue;
    ASSIGN_OR_RETURN(Trace trace, importer.import(path, options));
    RETURN_IF_ERROR(CheckTraceUsable(trace, path));
    return trace;
  }
  std::string known;
  for (const ImporterEntry& importer : Importers()) {
    known += fmt::format("\n  - {}", importer.description);
  }
  return InvalidInputError(fmt::format(
      "{}: not a trace format Sightline reads (recognised from the first bytes). Supported:{}\n"
      "For an .nsys-rep file, run `nsys export --type sqlite -o FILE.sqlite FILE.nsys-rep` first.",
      path, known));
}

}  // namespace sightline
