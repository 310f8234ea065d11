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

namespace sightline {

std::string_view FileNameOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
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

// ---- Temporary files, removed on failure and on the signals that end a run ----

namespace {

// The live temporaries, for the signal handler: fixed slots (no allocation in the handler), each
// published with `ready` after its path is written.
constexpr int kTempSlots = 16;
struct TempSlot {
  std::atomic<bool> taken{false};
  std::atomic<bool> ready{false};
  char path[PATH_MAX];
};
TempSlot g_temps[kTempSlots];

extern "C" void RemoveTempsAndReraise(int sig) {
  for (TempSlot& t : g_temps) {
    if (t.ready.load(std::memory_order_acquire)) ::unlink(t.path);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void InstallSignalHandlersOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      // A signal the user ignores (nohup) or the program handles itself stays as it is.
      if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO) != 0) continue;
      struct sigaction sa {};
      sa.sa_handler = RemoveTempsAndReraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

int TrackTemp(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  InstallSignalHandlersOnce();
  for (int i = 0; i < kTempSlots; ++i) {
    bool expected = false;
    if (g_temps[i].taken.compare_exchange_strong(expected, true)) {
      std::memcpy(g_temps[i].path, path.c_str(), path.size() + 1);
      g_temps[i].ready.store(true, std::memory_order_release);
      return i;
    }
  }
  return -1;  // more live temporaries than slots: still removed on failure, not on a signal
}

void UntrackTemp(int slot) {
  if (slot < 0) return;
  g_temps[slot].ready.store(false, std::memory_order_release);
  g_temps[slot].taken.store(false, std::memory_order_release);
}

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
mode_t OutputMode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
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
  return 0666 & ~umask_bits;
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
    return AtomicFileWriter(path, "", f, -1);
  }
  // PATH.XXXXXX.tmp, created exclusively: no existing file is ever opened or replaced but path.
  std::string tmp = path + ".XXXXXX.tmp";
  const int fd = ::mkstemps(tmp.data(), 4);
  if (fd < 0) {
    const int err = errno;
    return OutputError(
        fmt::format("cannot write {}: {}; check that the directory exists and is writable", path,
                    std::strerror(err)));
  }
  const int slot = TrackTemp(tmp);
  // mkstemps creates the file 0600; give it the mode a plain open would (best effort: a failure
  // leaves the output private, not lost).
  (void)::fchmod(fd, OutputMode(path));
  std::FILE* f = ::fdopen(fd, "wb");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    UntrackTemp(slot);
    return WriteError(path, err);
  }
  return AtomicFileWriter(path, std::move(tmp), f, slot);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      tmp_(std::move(other.tmp_)),
      file_(other.file_),
      slot_(other.slot_) {
  other.file_ = nullptr;
  other.slot_ = -1;
}

AtomicFileWriter::~AtomicFileWriter() { Abandon(); }

void AtomicFileWriter::Abandon() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  UntrackTemp(slot_);
  slot_ = -1;
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
  if (std::fflush(file_) != 0) err = errno;
  if (err == 0 && !tmp_.empty() && ::fsync(::fileno(file_)) != 0) err = errno;
  if (std::fclose(file_) != 0 && err == 0) err = errno;
  file_ = nullptr;
  if (tmp_.empty()) {
    return err == 0 ? Status::Ok() : WriteError(path_, err);
  }
  // Inputs read since Open() (the files of a directory, say) are protected too.
  Status input = CheckNotAnInput(path_);
  if (err == 0 && input.ok() && std::rename(tmp_.c_str(), path_.c_str()) != 0) err = errno;
  if (err != 0 || !input.ok()) {
    ::unlink(tmp_.c_str());
    UntrackTemp(slot_);
    slot_ = -1;
    return input.ok() ? WriteError(path_, err) : input;
  }
  UntrackTemp(slot_);
  slot_ = -1;
  SyncDirectoryOf(path_);
  return Status::Ok();
}

}  // namespace sightline
