#include "base/file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "base/decompressor.h"
#include "base/input_limits.h"
#include "base/output_temps.h"

namespace sightline {

std::string_view FileNameOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view WithoutCompressionSuffix(std::string_view name) {
  for (std::string_view suffix : {".gz", ".zst", ".zstd"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      return name.substr(0, name.size() - suffix.size());
    }
  }
  return name;
}
namespace {

Status OpenError(const std::string& path) {
  const int err = errno;
  if (err == ENOENT) {
    return NotFoundError(fmt::format("{}: no such file; check the path", path));
  }
  return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
}

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

}  // namespace

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgumentError(fmt::format("{}: is a directory, expected a trace file", path));
  }
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return OpenError(path);
  NoteInputFile(path);
  ASSIGN_OR_RETURN(const uint64_t limit, MaxInflatedBytes());
  std::string out;
  uint64_t size = 0;
  if (std::fseek(f.get(), 0, SEEK_END) == 0) {
    const long end = std::ftell(f.get());
    size = end > 0 ? static_cast<uint64_t>(end) : 0;
    std::fseek(f.get(), 0, SEEK_SET);
  }
  // Read in place (no buffer on the stack: 64 KiB of it overflowed a 128 KiB stack), in pieces
  // of at least 64 KiB, the whole file at once when its size is known.
  constexpr size_t kPiece = size_t{1} << 16;
  auto too_large = [&] {
    return InvalidInputError(fmt::format(
        "{}: larger than {} bytes, the limit that protects this machine's memory ({}); if the "
        "file is genuine, raise the limit with {}=SIZE or analyze it on a larger machine",
        path, limit, InputLimitSource(), kMaxInputSizeEnv));
  };
  size_t have = 0;
  for (;;) {
    const size_t want = have == 0 && size > 0 && size <= limit ? static_cast<size_t>(size) + 1
                                                               : std::max(kPiece, have / 2);
    // The memory limit holds for plain files too, and ends a read of /dev/zero or an endless pipe.
    if (have > limit) return too_large();
    const size_t room = static_cast<size_t>(std::min<uint64_t>(want, limit + 1 - have));
    try {
      out.resize(have + room);
    } catch (const std::bad_alloc&) {
      return OutOfMemoryForInputError(path, have + room);
    }
    const size_t n = std::fread(out.data() + have, 1, room, f.get());
    have += n;
    if (n < room) break;
  }
  out.resize(have);
  if (have > limit) return too_large();
  if (std::ferror(f.get())) return IoError(fmt::format("{}: read failed", path));
  return out;
}

StatusOr<std::string> ReadFilePrefix(const std::string& path, size_t n) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgumentError(fmt::format("{}: is a directory, expected a trace file", path));
  }
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return OpenError(path);
  NoteInputFile(path);
  std::string out(n, '\0');
  const size_t got = std::fread(out.data(), 1, n, f.get());
  out.resize(got);
  return out;
}

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

StatusOr<std::string> GunzipToString(std::string_view gz, const std::string& what) {
  return DecompressToString(Compression::kGzip, gz, what);
}

// ---- Inputs are never replaced by outputs ----

namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  std::string path;  // as the reader named it, for the message
};

std::mutex& InputsMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::vector<FileId>& Inputs() {
  static auto* inputs = new std::vector<FileId>;
  return *inputs;
}

bool StatOf(const std::string& path, struct stat* st) { return ::stat(path.c_str(), st) == 0; }

}  // namespace

void NoteInputFile(const std::string& path) {
  struct stat st {};
  if (!StatOf(path, &st)) return;
  std::lock_guard<std::mutex> lock(InputsMutex());
  for (const FileId& f : Inputs()) {
    if (f.dev == st.st_dev && f.ino == st.st_ino) return;
  }
  Inputs().push_back({st.st_dev, st.st_ino, path});
}

Status CheckNotAnInput(const std::string& output_path) {
  struct stat st {};
  if (!StatOf(output_path, &st) || !S_ISREG(st.st_mode)) return Status::Ok();
  std::lock_guard<std::mutex> lock(InputsMutex());
  for (const FileId& f : Inputs()) {
    if (f.dev == st.st_dev && f.ino == st.st_ino) {
      const std::string same =
          f.path == output_path ? std::string() : fmt::format(" (the same file as {})", f.path);
      return InvalidArgumentError(fmt::format(
          "{}: refusing to write the output over an input of this run{}; choose another output "
          "path",
          output_path, same));
    }
  }
  return Status::Ok();
}

// ---- Outputs written to temporaries (base/output_temps.h) and renamed into place ----

namespace {

// An existing path that is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place:
// a temporary file renamed over it would replace the device with a regular file (as root, /dev/null
// itself).
bool IsSpecialFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

Status WriteError(const std::string& path, int err) {
  return OutputError(fmt::format("cannot write {}: {}", path, std::strerror(err)));
}

// Syncs the directory that holds path, so that a rename into it survives a crash of the machine.
void SyncDirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// The mode a new output gets: what open(2) would give it (0666 less the umask, read from
// /proc/self/status without changing it, since other threads may be creating files); an output
// that replaces a file keeps that file's mode.
mode_t UmaskBits() {
  mode_t umask_bits = 022;
  if (std::FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, status) != nullptr) {
      unsigned int value = 0;
      if (std::sscanf(line, "Umask: %o", &value) == 1) {
        umask_bits = static_cast<mode_t>(value & 0777);
        break;
      }
    }
    std::fclose(status);
  }
  return umask_bits;
}

mode_t OutputMode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  return 0666 & ~UmaskBits();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::Open(path));
  RETURN_IF_ERROR(w.Append(contents));
  return w.Commit();
}

StatusOr<AtomicFileWriter> AtomicFileWriter::Open(const std::string& path) {
  RETURN_IF_ERROR(CheckNotAnInput(path));
  if (IsSpecialFile(path)) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return WriteError(path, errno);
    return AtomicFileWriter(path, Temporary{}, f);
  }
  // Created exclusively: no existing file is ever opened or replaced but path.
  int fd = -1;
  ASSIGN_OR_RETURN(Temporary temp, CreateTemporary(path, /*directory=*/false, &fd));
  // The temporary is created 0600; give it the mode a plain open would (best effort: a failure
  // leaves the output private, not lost).
  (void)::fchmod(fd, OutputMode(path));
  std::FILE* f = ::fdopen(fd, "wb");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    RemoveTemporary(temp);
    return WriteError(path, err);
  }
  return AtomicFileWriter(path, std::move(temp), f);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)), temp_(std::move(other.temp_)), file_(other.file_) {
  other.file_ = nullptr;
  other.temp_ = Temporary{};
}

AtomicFileWriter::~AtomicFileWriter() { Abandon(); }

void AtomicFileWriter::Abandon() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  RemoveTemporary(temp_);
}

Status AtomicFileWriter::Append(std::string_view bytes) {
  if (file_ == nullptr) return OutputError(fmt::format("cannot write {}: already closed", path_));
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    const int err = errno;
    Abandon();
    return WriteError(path_, err);
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  if (file_ == nullptr) return OutputError(fmt::format("cannot write {}: already closed", path_));
  int err = 0;
  const bool in_place = temp_.path.empty();
  if (std::fflush(file_) != 0) err = errno;
  if (err == 0 && !in_place && ::fsync(::fileno(file_)) != 0) err = errno;
  if (std::fclose(file_) != 0 && err == 0) err = errno;
  file_ = nullptr;
  if (in_place) {
    return err == 0 ? Status::Ok() : WriteError(path_, err);
  }
  // Inputs read since Open() (the files of a directory, say) are protected too.
  Status input = CheckNotAnInput(path_);
  if (err == 0 && input.ok() && std::rename(temp_.path.c_str(), path_.c_str()) != 0) err = errno;
  if (err != 0 || !input.ok()) {
    RemoveTemporary(temp_);
    return input.ok() ? WriteError(path_, err) : input;
  }
  UntrackTemporary(temp_);
  SyncDirectoryOf(path_);
  return Status::Ok();
}

// ---- Several files that appear together ----

namespace {

Status WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(StatusCode::kOutputError, std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

bool IsPlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

Status WriteFilesAtomically(const std::string& dir,
                            const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, contents] : files) {
    if (!IsPlainName(name)) {
      return InternalError(fmt::format("{}: '{}' is not a plain file name", dir, name));
    }
    RETURN_IF_ERROR(CheckNotAnInput(dir + "/" + name));
  }
  struct stat st {};
  const bool exists = ::stat(dir.c_str(), &st) == 0;
  if (exists && !S_ISDIR(st.st_mode)) {
    return OutputError(
        fmt::format("cannot write into {}: it exists and is not a directory; "
                    "choose another output directory",
                    dir));
  }
  // A new directory is made whole beside where it goes and renamed there in one step; into an
  // existing one, every file is written to a temporary directory inside it first.
  std::string at = dir;
  while (at.size() > 1 && at.back() == '/') at.pop_back();
  ASSIGN_OR_RETURN(Temporary temp, CreateTemporary(exists ? at + "/out" : at, true, nullptr));
  for (const auto& [name, contents] : files) {
    const std::string path = temp.path + "/" + name;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    Status s =
        fd < 0 ? Status(StatusCode::kOutputError, std::strerror(errno)) : WriteAll(fd, contents);
    if (s.ok() && ::fsync(fd) != 0) s = Status(StatusCode::kOutputError, std::strerror(errno));
    if (fd >= 0) {
      (void)::fchmod(fd, OutputMode(dir + "/" + name));
      if (::close(fd) != 0 && s.ok()) s = Status(StatusCode::kOutputError, std::strerror(errno));
    }
    if (!s.ok()) {
      RemoveTemporary(temp);
      return OutputError(fmt::format("cannot write {}/{}: {}; none of the {} files was written",
                                     dir, name, s.message(), files.size()));
    }
  }
  for (const auto& [name, contents] : files) RETURN_IF_ERROR(CheckNotAnInput(dir + "/" + name));
  if (!exists) {
    (void)::chmod(temp.path.c_str(), 0777 & ~UmaskBits());
    if (std::rename(temp.path.c_str(), at.c_str()) == 0) {
      UntrackTemporary(temp);
      SyncDirectoryOf(at);
      return Status::Ok();
    }
    const int err = errno;
    RemoveTemporary(temp);
    return WriteError(dir, err);
  }
  // Every file is whole on disk: moving them in takes no space.
  for (const auto& [name, contents] : files) {
    if (std::rename((temp.path + "/" + name).c_str(), (at + "/" + name).c_str()) != 0) {
      const int err = errno;
      RemoveTemporary(temp);
      return WriteError(at + "/" + name, err);
    }
  }
  RemoveTemporary(temp);
  SyncDirectoryOf(at + "/");
  return Status::Ok();
}

}  // namespace sightline
