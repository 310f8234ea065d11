// The Kineto importer's gzip path: the input is the JSON text, compressed here (libdeflate) into a
// valid gzip file, so that mutations of the JSON reach the streaming inflater's buffer handling
// (fuzz_kineto_json.cc feeds it damaged gzip streams).
#include <libdeflate.h>

#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "importers/kineto/kineto_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static libdeflate_compressor* compressor = libdeflate_alloc_compressor(1);
  if (compressor == nullptr) std::abort();
  std::string gz(libdeflate_gzip_compress_bound(compressor, size), '\0');
  const size_t n = libdeflate_gzip_compress(compressor, data, size, gz.data(), gz.size());
  if (n == 0) std::abort();
  gz.resize(n);
  const std::string path = sightline::fuzz::WriteInputFile(gz, ".json.gz");
  const size_t window_bytes = size_t{64} << (size % 8);
  (void)sightline::kineto::ImportKinetoJsonWithWindow(path, window_bytes);
  return 0;
}
