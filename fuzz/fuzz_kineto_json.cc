// The Kineto (PyTorch profiler) JSON importer on arbitrary bytes, as a file: plain JSON, or gzip
// when the input starts with gzip's magic (seeds include .json.gz files). The parse window (how
// much of traceEvents is parsed at a time) varies with the input's size, so that events straddle
// window boundaries. (The registry's kineto-json reader is fuzzed by fuzz_reader too, at the
// default window, gzip'd or not.)
// CI executions: 8000
#include "fuzz_support.h"
#include "importers/kineto/kineto_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      sightline::fuzz::WriteInputFile(sightline::fuzz::AsView(data, size), ".json");
  const size_t window_bytes = size_t{64} << (size % 8);  // 64 B .. 8 KiB
  (void)sightline::kineto::ImportKinetoJsonWithWindow(path, window_bytes);
  return 0;
}
