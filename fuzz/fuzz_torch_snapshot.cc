// The PyTorch memory snapshot reader (a plain-data pickle, docs/formats/torch_snapshot.md) on
// arbitrary bytes: decoding, refusal of code opcodes, and the mapping into memory events.
#include "fuzz_support.h"
#include "importers/torch_snapshot/torch_snapshot_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)sightline::ImportTorchSnapshotBytes(sightline::fuzz::AsView(data, size), "fuzz.pickle");
  return 0;
}
