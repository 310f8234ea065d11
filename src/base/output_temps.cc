#include "base/output_temps.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace sightline {
namespace {

constexpr std::string_view kMarker = ".sightline-";
constexpr std::string_view kSuffix = ".tmp";
constexpr size_t kRandomChars = 6;

// The live temporaries, for the signal handler: fixed slots (no allocation in the handler), each
// published with `ready` after its path is written.
constexpr int kSlots = 64;
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<bool> ready{false};
  bool directory = false;
  char path[PATH_MAX];
};
Slot g_slots[kSlots];

// Removes a file, or a directory and the files in it (temporaries hold files only): system calls
// only, so that the signal handler can call it.
void RemovePath(const char* path, bool directory) {
  if (!directory) {
    ::unlink(path);
    return;
  }
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    alignas(8) char buf[1024];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        struct Entry {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        const Entry* e = reinterpret_cast<const Entry*>(buf + at);
        const bool dots =
            e->name[0] == '.' && (e->name[1] == '\0' || (e->name[1] == '.' && e->name[2] == '\0'));
        if (!dots) ::unlinkat(fd, e->name, 0);
        at += e->reclen;
      }
    }
    ::close(fd);
  }
  ::rmdir(path);
}

extern "C" void RemoveTemporariesAndReraise(int sig) {
  RemoveLiveTemporaries();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// A write past `ulimit -f` then fails with EFBIG, and the writer reports it ("File too large"),
// removing its temporary, instead of the process ending with a half-written one.
extern "C" void IgnoreFileSizeSignal(int) {}

int TrackTemporary(const std::string& path, bool directory) {
  if (path.size() >= PATH_MAX) return -1;
  InstallTemporaryCleanupOnSignals();
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slots[i].taken.compare_exchange_strong(expected, true)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].directory = directory;
      g_slots[i].ready.store(true, std::memory_order_release);
      return i;
    }
  }
  return -1;  // more live temporaries than slots: still removed on failure, not on a signal
}

std::string RandomChars() {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[kRandomChars];
  if (::getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
    static std::atomic<uint64_t> counter{0};
    uint64_t x =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (counter++ * 0x9E3779B97F4A7C15ull);
    for (unsigned char& b : bytes) {
      b = static_cast<unsigned char>(x);
      x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
  }
  std::string out;
  for (unsigned char b : bytes) out += kChars[b % (sizeof kChars - 1)];
  return out;
}

size_t NameMax(const std::string& dir) {
  const long v = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  return v > 0 ? static_cast<size_t>(v) : size_t{NAME_MAX};
}

// The first `max` bytes of name, not ending inside a UTF-8 character.
std::string_view CutAtCharacter(std::string_view name, size_t max) {
  if (name.size() <= max) return name;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  return name.substr(0, n);
}

bool IsAlnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

const std::string& TemporaryHostTag() {
  static const std::string tag = [] {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    uint32_t h = 2166136261u;  // FNV-1a
    for (const char* p = host; *p != '\0'; ++p) {
      h ^= static_cast<unsigned char>(*p);
      h *= 16777619u;
    }
    return fmt::format("{:08x}", h);
  }();
  return tag;
}

bool ParseTemporaryName(std::string_view name, std::string* host, long* pid) {
  if (!name.ends_with(kSuffix)) return false;
  const size_t at = name.rfind(kMarker);
  if (at == std::string_view::npos) return false;
  std::string_view rest = name.substr(at + kMarker.size());
  rest.remove_suffix(kSuffix.size());
  // HOST(8 hex)-PID-XXXXXX
  if (rest.size() < 8 + 1 + 1 + 1 + kRandomChars) return false;
  for (size_t i = 0; i < 8; ++i) {
    if (!IsHex(rest[i])) return false;
  }
  if (rest[8] != '-') return false;
  const std::string_view random = rest.substr(rest.size() - kRandomChars);
  for (char c : random) {
    if (!IsAlnum(c)) return false;
  }
  if (rest[rest.size() - kRandomChars - 1] != '-') return false;
  const std::string_view digits = rest.substr(9, rest.size() - kRandomChars - 1 - 9);
  if (digits.empty() || digits.size() > 10) return false;
  long value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *host = std::string(rest.substr(0, 8));
  *pid = value;
  return true;
}

StatusOr<Temporary> CreateTemporary(const std::string& path, bool directory, int* fd) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const std::string prefix = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string_view name = slash == std::string::npos
                                    ? std::string_view(path)
                                    : std::string_view(path).substr(slash + 1);
  RemoveStaleTemporaries(dir);
  const std::string tag =
      fmt::format("{}{}-{}-", kMarker, TemporaryHostTag(), static_cast<long>(::getpid()));
  const size_t fixed = tag.size() + kRandomChars + kSuffix.size();
  const size_t name_max = NameMax(dir);
  // The output's own name may take up to NAME_MAX bytes; the temporary's cuts it to fit.
  const std::string stem(CutAtCharacter(name, name_max > fixed ? name_max - fixed : 0));
  int err = 0;
  for (int attempt = 0; attempt < 64; ++attempt) {
    Temporary t;
    t.path = prefix + stem + tag + RandomChars() + std::string(kSuffix);
    t.directory = directory;
    if (directory) {
      if (::mkdir(t.path.c_str(), 0700) == 0) {
        t.slot = TrackTemporary(t.path, true);
        return t;
      }
    } else {
      const int f = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (f >= 0) {
        *fd = f;
        t.slot = TrackTemporary(t.path, false);
        return t;
      }
    }
    err = errno;
    if (err != EEXIST) break;
  }
  return OutputError(
      fmt::format("cannot write {}: {}; check that the directory exists and is "
                  "writable",
                  path, std::strerror(err)));
}

void UntrackTemporary(Temporary& temp) {
  if (temp.slot < 0) return;
  g_slots[temp.slot].ready.store(false, std::memory_order_release);
  g_slots[temp.slot].taken.store(false, std::memory_order_release);
  temp.slot = -1;
}

void RemoveTemporary(Temporary& temp) {
  if (!temp.path.empty()) RemovePath(temp.path.c_str(), temp.directory);
  UntrackTemporary(temp);
}

int RemoveStaleTemporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  int removed = 0;
  const uid_t me = ::geteuid();
  const long self = static_cast<long>(::getpid());
  while (const dirent* e = ::readdir(d)) {
    std::string host;
    long pid = 0;
    if (!ParseTemporaryName(e->d_name, &host, &pid)) continue;
    if (host != TemporaryHostTag() || pid <= 0 || pid == self) continue;
    // Alive, or not ours to signal (EPERM: alive): left alone.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    const std::string p = dir + "/" + e->d_name;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || st.st_uid != me) continue;
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
      RemovePath(p.c_str(), S_ISDIR(st.st_mode));
      ++removed;
    }
  }
  ::closedir(d);
  return removed;
}

void RemoveLiveTemporaries() {
  for (Slot& t : g_slots) {
    if (t.ready.load(std::memory_order_acquire)) RemovePath(t.path, t.directory);
  }
}

void InstallTemporaryCleanupOnSignals() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A stack of its own for the handler on this thread (the one that writes outputs), so that
    // running out of stack still removes the temporaries.
    static char* alternate = new char[size_t{64} << 10];
    stack_t old_stack{};
    if (::sigaltstack(nullptr, &old_stack) == 0 && (old_stack.ss_flags & SS_DISABLE) != 0) {
      stack_t ss{};
      ss.ss_sp = alternate;
      ss.ss_size = size_t{64} << 10;
      ::sigaltstack(&ss, nullptr);
    }
    static constexpr int kEnding[] = {SIGHUP,  SIGINT,    SIGQUIT, SIGILL,  SIGTRAP,
                                      SIGABRT, SIGBUS,    SIGFPE,  SIGUSR1, SIGSEGV,
                                      SIGUSR2, SIGPIPE,   SIGALRM, SIGTERM, SIGSTKFLT,
                                      SIGXCPU, SIGVTALRM, SIGPROF, SIGPWR,  SIGSYS};
    auto install = [](int sig, void (*handler)(int), int flags) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0) return;
      // A signal the user ignores (nohup) or the program handles itself stays as it is.
      if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO) != 0) return;
      struct sigaction sa {};
      sa.sa_handler = handler;
      sa.sa_flags = flags;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    };
    for (int sig : kEnding) install(sig, &RemoveTemporariesAndReraise, SA_ONSTACK);
    install(SIGXFSZ, &IgnoreFileSizeSignal, SA_RESTART);
  });
}

}  // namespace sightline
