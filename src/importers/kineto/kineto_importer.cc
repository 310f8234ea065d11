#include "importers/kineto/kineto_importer.h"

#include <string>

#include "base/file_io.h"
#include "base/mapped_reads.h"
#include "importers/kineto/kineto_events_reader.h"
#include "importers/kineto/kineto_parser.h"
#include "importers/kineto/kineto_sniff.h"

namespace sightline {

bool SniffKinetoJson(std::string_view first_bytes) {
  if (IsGzip(first_bytes)) {
    char head[4096];
    const size_t n = kineto::InflateGzipPrefix(first_bytes, head, sizeof head);
    // Nothing inflated from the prefix: undecidable here; the importer checks the whole file.
    if (n == 0) return true;
    return kineto::LooksLikeJsonObject(std::string_view(head, n));
  }
  return kineto::LooksLikeJsonObject(first_bytes);
}

StatusOr<Trace> ImportKinetoJson(const std::string& path) {
  // With SIGHTLINE_KINETO_MMAP the file is mapped: one cut shorter meanwhile reads as zeros past
  // its new end (base/mapped_reads.h) and is refused here.
  const MappedReadCheck cut(path);
  StatusOr<Trace> trace =
      kineto::ImportKinetoJsonWithWindow(path, kineto::EventsReader::kDefaultWindowBytes);
  RETURN_IF_ERROR(cut.Check());
  return trace;
}

}  // namespace sightline
