// The bytes of an input, whatever its compression: every reader reads through here, so that gzip
// and zstd work for every kind of input, and the memory limit (base/input_limits.h) holds for the
// decompressed size. The compression is recognised from the first bytes, never the name.
#pragma once

#include <string>
#include <string_view>

#include "base/decompressor.h"
#include "base/status.h"

namespace sightline {

// From the first bytes (gzip: 1f 8b; zstd: the frame magic 28 b5 2f fd).
Compression CompressionOf(std::string_view first_bytes);
const char* CompressionName(Compression c);  // "none", "gzip", "zstd"

// Inflates zstd frames (several may be concatenated; skippable frames are skipped), counted
// against the input limit before the content is allocated (DecompressToString, decompressor.h);
// InvalidInput when truncated, corrupt or too large; `what` names the file.
StatusOr<std::string> UnzstdToString(std::string_view zst, const std::string& what);

// `bytes` decompressed as CompressionOf says (plain bytes are returned as they are).
StatusOr<std::string> DecompressInput(std::string bytes, const std::string& what);

// The whole file, decompressed. Errors as ReadFileToString's and the decompressors'.
StatusOr<std::string> ReadInput(const std::string& path);

// The first bytes of a file's content, decompressed, for recognising its format (at most 16 MiB
// of compressed input is read). A damaged start says what is wrong (a cut zstd frame, a gzip
// header whose file name runs on), as the whole read would.
struct InputHead {
  std::string bytes;  // at most the n asked for
  Compression compression = Compression::kNone;
  bool whole = false;  // the content ends within `bytes`
};
StatusOr<InputHead> ReadInputHead(const std::string& path, size_t n);

}  // namespace sightline
