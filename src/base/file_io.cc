#include "base/file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <libdeflate.h>
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
#include <vector>

#include "base/input_limits.h"

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
  if (std::fseek(f.get(), 0, SEEK_END) == 0) {
    const long size = std::ftell(f.get());
    if (size > 0 && static_cast<uint64_t>(size) <= limit) out.reserve(static_cast<size_t>(size));
    std::fseek(f.get(), 0, SEEK_SET);
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    // The memory limit holds for plain files too, and ends a read of /dev/zero or an endless pipe.
    if (out.size() + n > limit) {
      return InvalidInputError(fmt::format(
          "{}: larger than {} bytes, the limit that protects this machine's memory ({}); if the "
          "file is genuine, raise the limit with {}=SIZE or analyze it on a larger machine",
          path, limit, InputLimitSource(), kMaxInputSizeEnv));
    }
    out.append(buf, n);
  }
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
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!d) return InternalError("cannot allocate a gzip decompressor");
  ASSIGN_OR_RETURN(const uint64_t limit, MaxInflatedBytes());
  std::string out;
  size_t in_pos = 0;
  while (in_pos < gz.size()) {
    std::string_view member = gz.substr(in_pos);
    if (!IsGzip(member)) {
      // Trailing zero padding after the last member is tolerated (some tools write it).
      if (member.find_first_not_of('\0') == std::string_view::npos) break;
      return InvalidInputError(
          fmt::format("{}: gzip data is followed by {} bytes of garbage", what, member.size()));
    }
    if (member.size() < 18) {
      return InvalidInputError(
          fmt::format("{}: gzip stream is truncated; re-copy or re-export the file", what));
    }
    // ISIZE (last 4 bytes of the member) is the size mod 2^32; we only know where a member ends
    // after inflating it, so guess from the footer of the whole input and grow on demand.
    uint32_t isize;
    std::memcpy(&isize, gz.data() + gz.size() - 4, 4);
    // The footer is not trusted beyond what deflate can produce (at most 1032 bytes per input
    // byte): a small file claiming 4 GiB does not take 4 GiB of memory.
    size_t guess =
        std::max<size_t>(std::min<size_t>(isize, member.size() * 1032), member.size() * 4);
    const size_t base = out.size();
    // The whole output stays within the limit: a gzip bomb fails here, before the memory is taken.
    const size_t room = limit > base ? static_cast<size_t>(limit - base) : 0;
    guess = std::min(guess, room);
    for (;;) {
      out.resize(base + guess);
      size_t consumed = 0, produced = 0;
      const libdeflate_result r = libdeflate_gzip_decompress_ex(
          d.get(), member.data(), member.size(), out.data() + base, guess, &consumed, &produced);
      if (r == LIBDEFLATE_SUCCESS) {
        out.resize(base + produced);
        in_pos += consumed;
        break;
      }
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
        if (guess >= room) {
          out.clear();
          return InflatedTooLargeError(what, gz.size(), limit);
        }
        guess = std::min(std::max<size_t>(guess, 4096) * 2, room);
        continue;
      }
      out.clear();
      return InvalidInputError(fmt::format(
          "{}: gzip stream is corrupt or truncated (inflate failed after {} input bytes); "
          "re-copy or re-export the file",
          what, in_pos));
    }
  }
  return out;
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
