// The bytes of a Kineto trace as a forward stream for the parser, with simdjson's padding.
// A plain file is memory-mapped (private, so the parser's temporary bytes stay in this process)
// between two anonymous guard pages that give the headroom and padding; the pages already parsed
// are dropped from the mapping as the stream moves on, so resident memory stays small, and no
// byte is copied (read() into a buffer spent about a tenth of an import copying). Where mapping
// fails, the file is read in pieces into one reused buffer instead. As with SQLite's memory map
// for nsys exports, a file cut shorter by another process while it is being read ends the
// process with SIGBUS rather than an error. A gzip file is inflated whole
// (libdeflate has no streaming API) straight into one buffer (transparent huge pages requested),
// and the compressed bytes are freed before parsing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace sightline::kineto {

// Set (to anything): plain files are memory-mapped instead of read() in pieces. Off by default: a
// mapped file that another process cuts shorter ends the process (SIGBUS) instead of giving an
// error, and reading costs only about 4% more (docs/evidence/faster-readers/).
inline constexpr char kMapEnv[] = "SIGHTLINE_KINETO_MMAP";

class JsonStream {
 public:
  // Extra writable bytes around data() (see data()).
  static constexpr size_t kPadding = 64;  // >= simdjson::SIMDJSON_PADDING

  // Opens the file; gzip (recognised by its magic) is inflated here. Errors name the file and
  // say what to do (no such file, empty, truncated or corrupt gzip).
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
  // Up to the last n bytes of the document, without moving the stream.
  StatusOr<std::string> Tail(size_t n);

 private:
  // Parsed bytes of a mapped file are dropped from the mapping in steps of this many bytes.
  static constexpr size_t kDropBytes = size_t{4} << 20;

  JsonStream() = default;
  bool MapFile(size_t file_size);
  void DropParsedPages();
  Status ReadMore();
  void Release();

  std::string path_;
  int fd_ = -1;               // plain file; -1 for inflated gzip
  char* buf_ = nullptr;       // read: NewBuffer'd; gzip: mmap'd; mapped: inside map_base_
  char* map_base_ = nullptr;  // a mapped plain file: the mapping (guard page, file, guard)
  size_t map_length_ = 0;
  size_t dropped_ = 1;          // mapped: buf_[1, dropped_) is no longer mapped in
  size_t capacity_ = 0;         // bytes at buf_
  size_t begin_ = 1, end_ = 1;  // buf_[0] is headroom for data()[-1]
  uint64_t consumed_ = 0;
  uint64_t size_hint_ = 0;
  bool eof_ = false;
  bool gzip_ = false;
};

}  // namespace sightline::kineto
