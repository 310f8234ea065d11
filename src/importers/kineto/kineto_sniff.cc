#include "importers/kineto/kineto_sniff.h"

#include <libdeflate.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace sightline::kineto {

bool LooksLikeJsonObject(std::string_view bytes) {
  if (bytes.starts_with("\xEF\xBB\xBF")) bytes.remove_prefix(3);
  for (char c : bytes) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

size_t InflateGzipPrefix(std::string_view gz, char* out, size_t out_size) {
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!d || out_size == 0) return 0;
  // libdeflate reports no output count on failure, and a prefix always fails (truncated). JSON
  // text holds no NUL bytes, so the bytes before the first NUL are what was inflated.
  std::memset(out, 0, out_size);
  size_t produced = 0;
  const libdeflate_result r =
      libdeflate_gzip_decompress(d.get(), gz.data(), gz.size(), out, out_size, &produced);
  if (r == LIBDEFLATE_SUCCESS) return produced;
  return static_cast<size_t>(std::find(out, out + out_size, '\0') - out);
}

}  // namespace sightline::kineto
