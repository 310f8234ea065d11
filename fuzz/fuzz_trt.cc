// TensorRT exports: trtexec's layer information (graph), profile and timing files and Trex's three
// metadata files, each reader on every input.
#include "fuzz_support.h"
#include "importers/trt_engine/trt_engine.h"
#include "model/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sightline;
  const std::string_view json = fuzz::AsView(data, size);
  Diagnostics diagnostics;
  (void)ParseTrtGraph(json, "fuzz.graph.json", diagnostics);
  (void)ParseTrtProfile(json, "fuzz.profile.json", diagnostics);
  (void)ParseTrtTiming(json, "fuzz.timing.json", diagnostics);
  for (TrtFileKind kind :
       {TrtFileKind::kDeviceMetadata, TrtFileKind::kBuildMetadata, TrtFileKind::kProfileMetadata}) {
    TrtMetadata metadata;
    (void)ParseTrtMetadata(json, kind, "fuzz.metadata.json", metadata, diagnostics);
  }
  return 0;
}
