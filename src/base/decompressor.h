// Streaming gzip and zstd decompression for every reader (base/input_data.h, the Kineto stream):
// the content comes out a piece at a time into the caller's buffer, and every byte is counted
// against the input limit (base/input_limits.h) as it comes, so that a decompression bomb stops
// at the limit having taken no memory for its content (docs/reliability.md, rule 7). Errors say
// which compression, what is wrong (corrupt, cut short, a header field that runs on, garbage
// after the data) and where.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sightline {

enum class Compression { kNone, kGzip, kZstd };

// A gzip header's file name (FNAME) or comment (FCOMMENT) longer than this is refused: gzip
// stores a file's base name there, never megabytes.
inline constexpr size_t kMaxGzipHeaderField = size_t{64} << 10;

class Decompressor {
 public:
  // Reads up to n compressed bytes into buf: how many (0: the input has ended).
  using Source = std::function<StatusOr<size_t>(char* buf, size_t n)>;

  // `what` names the file in messages; `compressed_bytes` (0 if unknown) is said with the limit.
  // `limit`: the most content bytes allowed; one more is InflatedTooLargeError.
  static StatusOr<std::unique_ptr<Decompressor>> Create(Compression compression, Source source,
                                                        std::string what, uint64_t limit,
                                                        uint64_t compressed_bytes);
  // Over bytes in memory.
  static StatusOr<std::unique_ptr<Decompressor>> OverBytes(Compression compression,
                                                           std::string_view bytes, std::string what,
                                                           uint64_t limit);
  virtual ~Decompressor() = default;

  // Up to n bytes of the content into out: how many, 0 once the content has ended.
  virtual StatusOr<size_t> Read(char* out, size_t n) = 0;

  // The source stopped early on purpose (a head is read from the first bytes only): running out
  // of input is then the end of what can be read, not a truncated file; cut() says it happened.
  void MarkInputCut() { input_cut_ = true; }
  bool cut() const { return cut_; }
  uint64_t produced() const { return produced_; }

 protected:
  Decompressor(Source source, std::string what, uint64_t limit, uint64_t compressed_bytes,
               Compression compression);
  // Compressed bytes at hand: [in_.data() + in_pos_, in_.data() + in_end_).
  size_t available() const { return in_end_ - in_pos_; }
  const char* next() const { return in_.data() + in_pos_; }
  // Reads more input, keeping the bytes not yet used; false at the end of the input.
  StatusOr<bool> Fill(size_t at_least);
  // The content grew by n: InflatedTooLargeError past the limit.
  Status Count(size_t n);
  uint64_t offset() const { return consumed_before_ + in_pos_; }  // compressed bytes used

  Source source_;
  std::string what_;
  uint64_t limit_;
  uint64_t compressed_bytes_;
  Compression compression_;
  std::string in_;
  size_t in_pos_ = 0, in_end_ = 0;
  uint64_t consumed_before_ = 0;  // compressed bytes dropped from in_ before in_pos_
  uint64_t produced_ = 0;
  bool input_ended_ = false;
  bool input_cut_ = false;
  bool cut_ = false;
};

// The whole content of compressed bytes as one string: counted first (no memory taken for the
// content), then taken in one allocation of its exact size and decompressed again. A gzip member
// whose trailer states a plausible size (at most kTrustedTrailerBytes, the limit and deflate's
// 1,032:1) is tried once in a buffer of that size first. Over the limit: InflatedTooLargeError;
// an allocation that fails is an error that says so, never std::bad_alloc.
inline constexpr uint64_t kTrustedTrailerBytes = uint64_t{512} << 20;
StatusOr<std::string> DecompressToString(Compression compression, std::string_view bytes,
                                         const std::string& what);

}  // namespace sightline
