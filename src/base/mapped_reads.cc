#include "base/mapped_reads.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "base/output_temps.h"

namespace sightline {
namespace {

// The files read past their end: fixed slots, filled by the handler without allocating.
constexpr int kFiles = 64;
struct Faults {
  std::atomic<bool> taken{false};
  std::atomic<bool> ready{false};
  uint64_t dev = 0, ino = 0;
  std::atomic<uint64_t> pages{0};
};
Faults g_faults[kFiles];
size_t g_page = 4096;

void Note(uint64_t dev, uint64_t ino) {
  for (Faults& f : g_faults) {
    if (f.ready.load(std::memory_order_acquire) && f.dev == dev && f.ino == ino) {
      f.pages.fetch_add(1);
      return;
    }
  }
  for (Faults& f : g_faults) {
    bool expected = false;
    if (f.taken.compare_exchange_strong(expected, true)) {
      f.dev = dev;
      f.ino = ino;
      f.pages.store(1);
      f.ready.store(true, std::memory_order_release);
      return;
    }
  }
}

// Parses a hexadecimal or decimal number at p, moving p past it.
uint64_t Number(const char*& p, const char* end, int base) {
  uint64_t v = 0;
  for (; p < end; ++p) {
    int d;
    if (*p >= '0' && *p <= '9') {
      d = *p - '0';
    } else if (base == 16 && *p >= 'a' && *p <= 'f') {
      d = *p - 'a' + 10;
    } else {
      break;
    }
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return v;
}

// One line of /proc/self/maps: "start-end perms offset major:minor inode path". True, with the
// file's identity, when `addr` is in its range and it maps a file.
bool LineMaps(const char* p, const char* end, uintptr_t addr, uint64_t* dev, uint64_t* ino) {
  const uint64_t start = Number(p, end, 16);
  if (p >= end || *p != '-') return false;
  ++p;
  const uint64_t stop = Number(p, end, 16);
  if (addr < start || addr >= stop) return false;
  for (int field = 0; field < 2; ++field) {  // perms, offset
    while (p < end && *p == ' ') ++p;
    while (p < end && *p != ' ') ++p;
  }
  while (p < end && *p == ' ') ++p;
  const uint64_t major = Number(p, end, 16);
  if (p >= end || *p != ':') return false;
  ++p;
  const uint64_t minor = Number(p, end, 16);
  while (p < end && *p == ' ') ++p;
  *ino = Number(p, end, 10);
  *dev = makedev(static_cast<unsigned>(major), static_cast<unsigned>(minor));
  return *ino != 0;
}

// The file mapped at addr, from /proc/self/maps: system calls only (the handler calls it).
bool FileMappedAt(uintptr_t addr, uint64_t* dev, uint64_t* ino) {
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  static char buf[8192];  // the handler's: one fault at a time is resolved
  static std::atomic_flag busy = ATOMIC_FLAG_INIT;
  while (busy.test_and_set(std::memory_order_acquire)) {
  }
  bool found = false;
  size_t have = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf + have, sizeof buf - have);
    if (n <= 0) break;
    have += static_cast<size_t>(n);
    size_t line = 0;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(buf + line, '\n', have - line));
      if (nl == nullptr) break;
      if (LineMaps(buf + line, nl, addr, dev, ino)) found = true;
      line = static_cast<size_t>(nl - buf) + 1;
      if (found) break;
    }
    if (found) break;
    std::memmove(buf, buf + line, have - line);
    have -= line;
    if (have == sizeof buf) have = 0;  // a line longer than the buffer: skipped
  }
  busy.clear(std::memory_order_release);
  ::close(fd);
  return found;
}

extern "C" void OnSigbus(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == BUS_ADRERR) {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
    uint64_t dev = 0, ino = 0;
    if (FileMappedAt(addr, &dev, &ino)) {
      void* page = reinterpret_cast<void*>(addr & ~(static_cast<uintptr_t>(g_page) - 1));
      if (::mmap(page, g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                 0) != MAP_FAILED) {
        Note(dev, ino);
        return;  // the read is done again, and reads zeros
      }
    }
  }
  RemoveLiveTemporaries();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void InstallMappedReadGuard() {
  static std::once_flag once;
  std::call_once(once, [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page = static_cast<size_t>(page);
    struct sigaction old {};
    if (::sigaction(SIGBUS, nullptr, &old) != 0) return;
    // A sanitizer's handler (SA_SIGINFO) or one the user set to ignore stays; the output
    // temporaries' handler is replaced (this one removes them too).
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler == SIG_IGN) return;
    struct sigaction sa {};
    sa.sa_sigaction = OnSigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, nullptr);
  });
}

uint64_t MappedReadFaults(dev_t dev, ino_t ino) {
  for (const Faults& f : g_faults) {
    if (f.ready.load(std::memory_order_acquire) && f.dev == static_cast<uint64_t>(dev) &&
        f.ino == static_cast<uint64_t>(ino)) {
      return f.pages.load();
    }
  }
  return 0;
}

MappedReadCheck::MappedReadCheck(const std::string& path) : path_(path) {
  InstallMappedReadGuard();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  known_ = true;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  before_ = MappedReadFaults(dev_, ino_);
}

Status MappedReadCheck::Check() const {
  if (!known_) return Status::Ok();
  const uint64_t pages = MappedReadFaults(dev_, ino_) - before_;
  if (pages == 0) return Status::Ok();
  return InvalidInputError(fmt::format(
      "{}: the file was cut shorter while it was read ({} page{} past its new end read as "
      "zeros): a program is still writing it, or another one truncated it. Analyze it once it is "
      "complete and no longer changing (for an nsys export, after `nsys export` has finished)",
      path_, pages, pages == 1 ? "" : "s"));
}

}  // namespace sightline
