// The bytes of a Kineto trace as a forward stream for the parser, with simdjson's padding.
// A plain file is read in pieces into one reused buffer (or, with SIGHTLINE_KINETO_MMAP set,
// memory-mapped between two anonymous guard pages, the pages already parsed dropped as the stream
// moves on; a file cut shorter by another process while mapped is caught by base/mapped_reads.h).
// A gzip or zstd file is streamed the same way, a window at a time through a Decompressor
// (base/decompressor.h) that counts every byte against the input limit, so that a decompression
// bomb stops at the limit without taking its memory. (Inflating a gzip file whole with libdeflate
// took 4.7x the memory and, on a VM, more time: page faults of the 490 MB buffer, 1.6 s of system
// time against 0.3 s.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/decompressor.h"
#include "base/status.h"

namespace sightline::kineto {

// Set (to anything): plain files are memory-mapped instead of read() in pieces. Off by default:
// reading costs only about 4% more (docs/evidence/faster-readers/), and a mapped file that another
// process cuts shorter reads as zeros past its end (base/mapped_reads.h, then an error) where
// read() sees the end.
inline constexpr char kMapEnv[] = "SIGHTLINE_KINETO_MMAP";

class JsonStream {
 public:
  // Extra writable bytes around data() (see data()).
  static constexpr size_t kPadding = 64;  // >= simdjson::SIMDJSON_PADDING

  // Opens the file; gzip and zstd are recognised by their magic. Errors name the file and say
  // what to do (no such file, empty, truncated or corrupt data, over the input limit).
  static StatusOr<std::unique_ptr<JsonStream>> Open(const std::string& path);
  ~JsonStream();
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  // The unconsumed bytes in memory: [data(), data() + size()). data()[-1] and the kPadding + 1
  // bytes from data() + size() are writable scratch that the caller may change temporarily
  // (restoring data()[-1]); everything in [data(), data() + size()) must be restored too.
  char* data() { return buf_ + begin_; }
  size_t size() const { return end_ - begin_; }
  // Bytes after data()[size() - 1] that can still be read in: false once everything is in.
  bool more() const { return !eof_; }
  // Document offset of data()[0] (after inflating, for gzip).
  uint64_t offset() const { return consumed_; }
  bool gzip() const { return gzip_; }
  // The document size when known up front (file size or inflated size), for reservations.
  uint64_t size_hint() const { return size_hint_; }

  void Consume(size_t n) {
    begin_ += n;
    consumed_ += n;
    if (map_base_ != nullptr && begin_ - dropped_ >= kDropBytes) DropParsedPages();
  }
  // Makes at least n bytes available from data() (fewer only at the end of the document).
  // data() may move.
  Status Fill(size_t n);
  // Back to the start of the document (re-reads a plain file).
  Status Rewind();
  // Up to the last n bytes of the document, without moving the stream; empty for a compressed
  // file (its end is not known before it has been read).
  StatusOr<std::string> Tail(size_t n);

 private:
  // Parsed bytes of a mapped file are dropped from the mapping in steps of this many bytes.
  static constexpr size_t kDropBytes = size_t{4} << 20;

  JsonStream() = default;
  bool MapFile(size_t file_size);
  Status StartDecompressor();  // (again) from the file's start
  void DropParsedPages();
  Status ReadMore();
  void Release();

  std::string path_;
  int fd_ = -1;               // the file (plain or compressed)
  char* buf_ = nullptr;       // read: NewBuffer'd; mapped: inside map_base_
  char* map_base_ = nullptr;  // a mapped plain file: the mapping (guard page, file, guard)
  size_t map_length_ = 0;
  size_t dropped_ = 1;          // mapped: buf_[1, dropped_) is no longer mapped in
  size_t capacity_ = 0;         // bytes at buf_
  size_t begin_ = 1, end_ = 1;  // buf_[0] is headroom for data()[-1]
  uint64_t consumed_ = 0;
  uint64_t size_hint_ = 0;
  bool eof_ = false;
  bool gzip_ = false;  // the content is decompressed (gzip or zstd)
  // Compressed input: the decompressor reads fd_.
  Compression compression_ = Compression::kNone;
  uint64_t compressed_bytes_ = 0;
  std::unique_ptr<Decompressor> decompressor_;
};

}  // namespace sightline::kineto
