// The recorder file reader (.slrec, include/sightline/recorder_format.h) on arbitrary bytes.
#include "fuzz_support.h"
#include "importers/recorder/recorder_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)sightline::ImportRecorderBytes(sightline::fuzz::AsView(data, size), "fuzz.slrec");
  return 0;
}
