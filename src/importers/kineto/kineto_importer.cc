#include "importers/kineto/kineto_importer.h"

namespace sightline {

// Placeholder until the importer lands: recognises nothing.
bool SniffKinetoJson(std::string_view) { return false; }

StatusOr<Trace> ImportKinetoJson(const std::string& path, const ImportOptions&) {
  return UnimplementedError(path + ": importer not built yet");
}

}  // namespace sightline
