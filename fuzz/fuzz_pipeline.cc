// The whole program on one input, as `sightline analyze FILE` runs it: the front door
// (importers/inputs.h: recognised by content, decompressed, read by whichever reader of the
// registry takes it), then the whole program on its document (whole_program.h). A reader added to
// the registry is fuzzed here with no list to edit. Seeds: every reader's (fuzz/gather_seeds.sh).
// CI executions: 3000
#include "fuzz_support.h"
#include "importers/inputs.h"
#include "whole_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sightline;
  fuzz::ChooseNsysThreads(data, size);
  const std::string path = fuzz::WriteInputFile(fuzz::AsView(data, size), ".input");
  StatusOr<InputDocument> doc = OpenInput(path);
  if (doc.ok()) fuzz::RunWholeProgram(doc->value);
  return 0;
}
