// Every reader of the registry (importers/inputs.h, InputReaders()) on arbitrary bytes, then the
// whole program on what it read (whole_program.h). The reader is named by SIGHTLINE_FUZZ_READER
// and called directly, without the sniffing of the front door, so that inputs the sniffer would
// send elsewhere still reach it (fuzz_pipeline fuzzes the sniffing). One input in five is given
// to the reader gzip'd. scripts/fuzz.sh runs this target once per reader, with that reader's seeds
// (fuzz/gather_seeds.sh): a reader added to the registry is fuzzed with no list to edit.
//   SIGHTLINE_FUZZ_READER=list fuzz_reader        the readers' names, one per line
//   SIGHTLINE_FUZZ_CLASSIFY=1 fuzz_reader FILE... "READER<TAB>FILE" per file a reader takes (as
//                                                 `sightline formats` does), for the seeds
// CI executions: 4000 per reader
#include <libdeflate.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "importers/inputs.h"
#include "whole_program.h"

namespace {

const sightline::InputReaderEntry* g_reader = nullptr;

void ListReaders() {
  for (const sightline::InputReaderEntry& r : sightline::InputReaders())
    std::printf("%s\n", r.name);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  using namespace sightline;
  if (std::getenv("SIGHTLINE_FUZZ_CLASSIFY") != nullptr) {
    for (int i = 1; i < *argc; ++i) {
      const std::string path = (*argv)[i];
      if (path.empty() || path[0] == '-') continue;
      StatusOr<RecognisedInput> in = RecogniseInput(path);
      if (in.ok()) std::printf("%s\t%s\n", in->reader->name, path.c_str());
    }
    std::exit(0);
  }
  const char* name = std::getenv("SIGHTLINE_FUZZ_READER");
  if (name != nullptr && std::string_view(name) == "list") {
    ListReaders();
    std::exit(0);
  }
  for (const InputReaderEntry& r : InputReaders()) {
    if (name != nullptr && std::string_view(name) == r.name) g_reader = &r;
  }
  if (g_reader == nullptr) {
    std::fprintf(stderr,
                 "fuzz_reader: set SIGHTLINE_FUZZ_READER to one of these readers "
                 "(SIGHTLINE_FUZZ_READER=list):\n");
    ListReaders();
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sightline;
  fuzz::ChooseNsysThreads(data, size);
  std::string_view bytes = fuzz::AsView(data, size);
  std::string gz;
  if (size % 5 == 4) {  // chosen from the input, so that a crash reproduces
    static libdeflate_compressor* compressor = libdeflate_alloc_compressor(1);
    if (compressor == nullptr) std::abort();
    gz.resize(libdeflate_gzip_compress_bound(compressor, size));
    gz.resize(libdeflate_gzip_compress(compressor, data, size, gz.data(), gz.size()));
    if (gz.empty()) std::abort();
    bytes = gz;
  }
  StatusOr<InputDocumentValue> document = g_reader->read(fuzz::WriteInputFile(bytes, ".input"));
  if (document.ok()) fuzz::RunWholeProgram(*document);
  return 0;
}
