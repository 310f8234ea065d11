#include "importers/importer.h"

#include <fmt/format.h>

#include "base/file_io.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/recorder/recorder_importer.h"

namespace sightline {

const std::vector<ImporterEntry>& Importers() {
  static const std::vector<ImporterEntry> kImporters = {
      {"nsys-sqlite", "Nsight Systems SQLite export (nsys export --type sqlite)", &SniffNsysSqlite,
       &ImportNsysSqlite},
      {"kineto-json", "PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip'd",
       &SniffKinetoJson, &ImportKinetoJson},
      {"sightline-recorder", "sightline record file (.slrec)", &SniffRecorderFile,
       &ImportRecorderFile},
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
    if (importer.sniff(head)) return importer.import(path, options);
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
