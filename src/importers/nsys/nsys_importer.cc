#include "importers/nsys/nsys_importer.h"

namespace sightline {

// Placeholder until the importer lands: recognises nothing.
bool SniffNsysSqlite(std::string_view) { return false; }

StatusOr<Trace> ImportNsysSqlite(const std::string& path, const ImportOptions&) {
  return UnimplementedError(path + ": importer not built yet");
}

}  // namespace sightline
