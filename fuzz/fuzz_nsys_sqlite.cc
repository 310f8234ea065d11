// The Nsight Systems SQLite importer on arbitrary bytes (seeds: small real exports, so that the
// mutations land in pages of real tables). Rows of wrong types are better reached by
// fuzz_nsys_rows.cc, which mutates values rather than bytes.
#include "fuzz_support.h"
#include "importers/nsys/nsys_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      sightline::fuzz::WriteInputFile(sightline::fuzz::AsView(data, size), ".sqlite");
  sightline::fuzz::ChooseNsysThreads(data, size);
  (void)sightline::ImportNsysSqlite(path, {});
  return 0;
}
