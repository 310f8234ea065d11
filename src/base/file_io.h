// Whole-file reading and gzip inflation (base/decompressor.h) for the importers, and atomic output
// writing for the CLI (a file appears complete or not at all).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/output_temps.h"
#include "base/status.h"

namespace sightline {

// The part of a path after its last '/': "/usr/lib/libnccl.so.2" -> "libnccl.so.2". A path
// recorded on another machine (a recording's executable, a stack frame's file), so no file
// system lookup.
std::string_view FileNameOf(std::string_view path);

// The name without the suffix of a compression Sightline reads through (".gz", ".zst", ".zstd"):
// "run.slrec.gz" -> "run.slrec", the file a recording's process tree names.
std::string_view WithoutCompressionSuffix(std::string_view name);

// Reads the whole file. NotFound when it does not exist, IoError when it cannot be read.
StatusOr<std::string> ReadFileToString(const std::string& path);

// Reads at most n bytes from the start of the file (for sniffing formats).
StatusOr<std::string> ReadFilePrefix(const std::string& path, size_t n);

bool IsGzip(std::string_view bytes);

// Inflates a gzip stream (several members are concatenated) within the input limit, counted
// before the content is allocated (DecompressToString). InvalidInput when truncated, corrupt or
// too large; `what` names the file in the message.
StatusOr<std::string> GunzipToString(std::string_view gz, const std::string& what);

// Outputs never replace inputs. The readers note every file they open by its identity (device and
// inode, after links); the writers below refuse a path that is, or leads to, one of them, with an
// InvalidArgument error that names both. A path that does not exist is never an input.
void NoteInputFile(const std::string& path);
Status CheckNotAnInput(const std::string& output_path);

// Writes to a temporary file of a unique name in the same directory (base/output_temps.h:
// STEM.sightline-HOST-PID-XXXXXX.tmp, within NAME_MAX), syncs it and renames it over path, so
// that the output appears complete or not at all, two runs writing one path leave one of the two
// whole, and no other file is touched. The temporary is removed on failure and on any signal that
// ends the run; one a killed run left is removed the next time an output is written to its
// directory. An existing path that is not a regular file (/dev/null, /dev/stdout, a FIFO) is
// written in place instead. Failures are OutputError.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Files that appear together or not at all (`allreduce plot`'s heatmaps and index): written into a
// temporary directory, whole and synced, then renamed: a new `dir` in one step; into an existing
// one, file by file once all are written (a full disk leaves none of them). `files` are (plain
// name, contents). Failures are OutputError; nothing of them is left.
Status WriteFilesAtomically(const std::string& dir,
                            const std::vector<std::pair<std::string, std::string>>& files);

// The same for output produced piece by piece: Append() writes to the temporary, Commit() renames
// it into place; a writer destroyed without Commit() removes it, so a failed run leaves nothing.
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
  AtomicFileWriter(std::string path, Temporary temp, std::FILE* file)
      : path_(std::move(path)), temp_(std::move(temp)), file_(file) {}
  void Abandon();

  std::string path_;
  Temporary temp_;  // path empty: the path is a device or a pipe, written in place
  std::FILE* file_ = nullptr;
};

}  // namespace sightline
