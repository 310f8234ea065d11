// The recorder file reader (.slrec, src/shared/recorder_format.h) on arbitrary bytes, then
// the whole program on the trace (whole_program.h). Each chunk carries a CRC-32 of its records, so
// a mutation inside a chunk would only ever meet the damaged-chunk path: one input in two has its
// file header and chunk headers repaired first (FixRecording), so that mutations reach the records
// themselves; the other half keeps its bytes, so the checks that refuse damage are fuzzed too.
// CI executions: 3000
#include <cstring>
#include <string>

#include "fuzz_support.h"
#include "importers/recorder/recorder_importer.h"
#include "shared/recorder_format.h"
#include "whole_program.h"

namespace {

// Sets the magic, a readable version and header size, and each chunk's magic and CRC where its
// payload size fits in what is left; a size that does not fit ends the walk (the damaged tail).
std::string FixRecording(std::string bytes) {
  namespace rf = sightline::recfmt;
  if (bytes.size() < rf::kFileHeaderBytes) return bytes;
  std::memcpy(bytes.data(), rf::kFileMagic, sizeof rf::kFileMagic);
  const uint32_t header[2] = {rf::kFormatVersion, static_cast<uint32_t>(rf::kFileHeaderBytes)};
  std::memcpy(bytes.data() + 8, header, sizeof header);
  size_t pos = rf::kFileHeaderBytes;
  while (bytes.size() - pos >= rf::kChunkHeaderBytes) {
    uint32_t h[4];
    std::memcpy(h, bytes.data() + pos, sizeof h);
    if (h[1] > bytes.size() - pos - rf::kChunkHeaderBytes) break;
    h[0] = rf::kChunkMagic;
    h[3] = rf::Crc32(bytes.data() + pos + rf::kChunkHeaderBytes, h[1]);
    std::memcpy(bytes.data() + pos, h, sizeof h);
    pos += rf::kChunkHeaderBytes + h[1];
  }
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sightline;
  std::string bytes(fuzz::AsView(data, size));
  if (size > 0 && (data[size / 2] & 1) == 0) bytes = FixRecording(std::move(bytes));
  StatusOr<Trace> trace = ImportRecorderBytes(bytes, "fuzz.slrec");
  if (!trace.ok()) return 0;
  InputDocumentValue document = std::move(*trace);
  fuzz::RunWholeProgram(document);
  return 0;
}
