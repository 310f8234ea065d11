// Whole-file reading and gzip inflation (libdeflate) for the importers, and atomic output writing
// for the CLI (a file appears complete or not at all).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sightline {

// The part of a path after its last '/': "/usr/lib/libnccl.so.2" -> "libnccl.so.2". A path
// recorded on another machine (a recording's executable, a stack frame's file), so no file
// system lookup.
std::string_view FileNameOf(std::string_view path);

// Reads the whole file. NotFound when it does not exist, IoError when it cannot be read.
StatusOr<std::string> ReadFileToString(const std::string& path);

// Reads at most n bytes from the start of the file (for sniffing formats).
StatusOr<std::string> ReadFilePrefix(const std::string& path, size_t n);

bool IsGzip(std::string_view bytes);

// Inflates a gzip stream (several members are concatenated). InvalidInput when truncated or
// corrupt; `what` names the file in the message.
StatusOr<std::string> GunzipToString(std::string_view gz, const std::string& what);

// Writes to path.tmp then renames, so a failed run leaves no partial file. An existing path that is
// not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place instead.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// The same for output produced piece by piece: Append() writes to path.tmp, Commit() renames it
// into place; a writer destroyed without Commit() removes path.tmp, so a failed run leaves nothing.
class AtomicFileWriter {
 public:
  static StatusOr<AtomicFileWriter> Open(const std::string& path);
  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  Status Append(std::string_view bytes);
  Status Commit();

 private:
  AtomicFileWriter(std::string path, std::FILE* file, bool direct)
      : path_(std::move(path)), file_(file), direct_(direct) {}
  void Abandon();

  std::string path_;
  std::FILE* file_ = nullptr;
  bool direct_ =
      false;  // the path is a device or a pipe (/dev/null, /dev/stdout): written in place
};

}  // namespace sightline
