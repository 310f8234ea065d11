#include "importers/kineto/kineto_stream.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/decompressor.h"
#include "base/file_io.h"
#include "base/input_data.h"
#include "base/input_limits.h"

namespace sightline::kineto {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// The plain-file buffer: windows of a few MiB are parsed at a time (kineto_events_reader.cc).
constexpr size_t kFileBuffer = size_t{8} << 20;

ssize_t ReadSome(int fd, char* out, size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd, out, std::min<size_t>(n, size_t{1} << 30));
    if (got >= 0 || errno != EINTR) return got;
  }
}

ssize_t ReadFully(int fd, char* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ReadSome(fd, out + done, n - done);
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return static_cast<ssize_t>(done);
}

Status ReadError(const std::string& path) {
  return IoError(fmt::format("{}: read failed: {}", path, std::strerror(errno)));
}

}  // namespace

namespace {

// Anonymous memory with transparent huge pages requested: a big buffer is then faulted in 2 MiB
// at a time instead of 4 KiB, which matters on virtual machines where a page fault is expensive.
// The mmap base and length are kept in a header just before the 2 MiB-aligned start.
struct Mapping {
  void* base;
  size_t length;
};

char* NewBuffer(size_t n) {
  const size_t length = n + 2 * kHugePage;
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t aligned =
      (reinterpret_cast<uintptr_t>(p) + sizeof(Mapping) + kHugePage - 1) & ~(kHugePage - 1);
  char* buffer = reinterpret_cast<char*>(aligned);
  const Mapping m{p, length};
  std::memcpy(buffer - sizeof m, &m, sizeof m);
  ::madvise(buffer, n, MADV_HUGEPAGE);
  return buffer;
}

void FreeBuffer(char* buffer) {
  if (!buffer) return;
  Mapping m;
  std::memcpy(&m, buffer - sizeof m, sizeof m);
  ::munmap(m.base, m.length);
}

}  // namespace

StatusOr<std::unique_ptr<JsonStream>> JsonStream::Open(const std::string& path) {
  std::unique_ptr<JsonStream> s(new JsonStream());
  s->path_ = path;
  s->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s->fd_ < 0) {
    if (errno == ENOENT)
      return NotFoundError(fmt::format("{}: no such file; check the path", path));
    return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  NoteInputFile(path);
  struct stat st;
  if (::fstat(s->fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgumentError(fmt::format("{}: not a regular file; expected a trace file", path));
  }
  const size_t file_size = static_cast<size_t>(st.st_size);
  if (file_size == 0) {
    return InvalidInputError(
        fmt::format("{}: the file is empty; the profiler may not have finished writing it", path));
  }
  char magic[4] = {0, 0, 0, 0};
  if (ReadFully(s->fd_, magic, 4) < 0 || ::lseek(s->fd_, 0, SEEK_SET) != 0) return ReadError(path);
  const Compression compression =
      CompressionOf(std::string_view(magic, std::min<size_t>(4, file_size)));
  if (compression != Compression::kNone) {
    s->gzip_ = true;  // the content is decompressed: offsets in messages are "of the inflated JSON"
    // Streamed: decompressed a window at a time, every byte counted against the limit.
    s->compression_ = compression;
    s->compressed_bytes_ = file_size;
    RETURN_IF_ERROR(s->StartDecompressor());
    s->capacity_ = kFileBuffer + 1 + kPadding + 1;
    s->buf_ = NewBuffer(s->capacity_);
    if (!s->buf_) return OutOfMemoryForInputError(path, s->capacity_);
    RETURN_IF_ERROR(s->Fill(1));
    if (s->size() == 0) {
      return InvalidInputError(
          fmt::format("{}: the {} file holds no data", path, CompressionName(compression)));
    }
    return s;
  }
  s->size_hint_ = file_size;
  if (std::getenv(kMapEnv) != nullptr && s->MapFile(file_size)) return s;
  s->capacity_ = std::min(file_size, kFileBuffer) + 1 + kPadding + 1;
  s->buf_ = NewBuffer(s->capacity_);
  if (!s->buf_) return OutOfMemoryForInputError(path, s->capacity_);
  return s;
}

JsonStream::~JsonStream() { Release(); }

bool JsonStream::MapFile(size_t file_size) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t file_pages = (file_size + page - 1) / page * page;
  // [guard page][the file's pages][guard page]: the guards are anonymous, writable memory for
  // data()[-1] at the start and the padding after the end (the rest of the file's last page reads
  // as zeros; a file of whole pages has none).
  const size_t length = page + file_pages + page;
  void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return false;
  char* const file_at = static_cast<char*>(base) + page;
  if (::mmap(file_at, file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd_, 0) ==
      MAP_FAILED) {
    ::munmap(base, length);
    return false;
  }
  ::madvise(file_at, file_pages, MADV_SEQUENTIAL);
  map_base_ = static_cast<char*>(base);
  map_length_ = length;
  buf_ = file_at - 1;  // buf_[0] is the guard page's last byte
  begin_ = dropped_ = 1;
  end_ = 1 + file_size;
  capacity_ = end_ + kPadding + 1;
  eof_ = true;
  return true;
}

void JsonStream::DropParsedPages() {
  // Up to the page before data(): data()[-1] is written while parsing.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t from = reinterpret_cast<uintptr_t>(buf_ + dropped_) / page * page;
  const uintptr_t to = reinterpret_cast<uintptr_t>(buf_ + begin_ - 1) / page * page;
  if (to <= from) return;
  // Private pages read back as the file's bytes if touched again (only Rewind does).
  ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
  dropped_ = static_cast<size_t>(reinterpret_cast<char*>(to) - buf_);
}

void JsonStream::Release() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (map_base_ != nullptr) {
    ::munmap(map_base_, map_length_);
    map_base_ = nullptr;
  } else {
    FreeBuffer(buf_);
  }
  buf_ = nullptr;
}

Status JsonStream::StartDecompressor() {
  if (::lseek(fd_, 0, SEEK_SET) != 0) return ReadError(path_);
  ASSIGN_OR_RETURN(const uint64_t limit, MaxInflatedBytes());
  const int fd = fd_;
  const std::string path = path_;
  Decompressor::Source source = [fd, path](char* buf, size_t n) -> StatusOr<size_t> {
    const ssize_t got = ReadSome(fd, buf, n);
    if (got < 0) return ReadError(path);
    return static_cast<size_t>(got);
  };
  ASSIGN_OR_RETURN(decompressor_, Decompressor::Create(compression_, std::move(source), path_,
                                                       limit, compressed_bytes_));
  return Status::Ok();
}

Status JsonStream::ReadMore() {
  const size_t room = capacity_ - kPadding - 1 - end_;
  if (decompressor_) {
    ASSIGN_OR_RETURN(const size_t got, decompressor_->Read(buf_ + end_, room));
    end_ += got;
    if (got < room) eof_ = true;  // Read fills the room unless the content has ended
    return Status::Ok();
  }
  const ssize_t got = ReadFully(fd_, buf_ + end_, room);
  if (got < 0) return ReadError(path_);
  end_ += static_cast<size_t>(got);
  if (static_cast<size_t>(got) < room) eof_ = true;
  return Status::Ok();
}

Status JsonStream::Fill(size_t n) {
  if (size() >= n || eof_) return Status::Ok();
  // Move what is left to the front (after the headroom byte), grow if n does not fit, read.
  const size_t left = size();
  if (begin_ > 1) {
    std::memmove(buf_ + 1, buf_ + begin_, left);
    begin_ = 1;
    end_ = 1 + left;
  }
  const size_t needed = 1 + n + kPadding + 1;
  if (needed > capacity_) {
    const size_t grown = std::max(needed, capacity_ * 2);
    char* bigger = NewBuffer(grown);
    if (!bigger) return OutOfMemoryForInputError(path_, grown);
    std::memcpy(bigger, buf_, end_);
    FreeBuffer(buf_);
    buf_ = bigger;
    capacity_ = grown;
  }
  while (size() < n && !eof_) RETURN_IF_ERROR(ReadMore());
  return Status::Ok();
}

Status JsonStream::Rewind() {
  consumed_ = 0;
  begin_ = 1;
  if (decompressor_) {
    end_ = 1;
    eof_ = false;
    return StartDecompressor();
  }
  if (map_base_ != nullptr) {
    dropped_ = 1;
    return Status::Ok();
  }
  if (::lseek(fd_, 0, SEEK_SET) != 0) return ReadError(path_);
  end_ = 1;
  eof_ = false;
  return Status::Ok();
}

StatusOr<std::string> JsonStream::Tail(size_t n) {
  if (decompressor_) return std::string();  // not known before the stream has been read
  if (map_base_ != nullptr) {
    const size_t total = size_hint_;
    const size_t take = std::min(n, total);
    return std::string(buf_ + 1 + total - take, take);
  }
  const size_t take = std::min<size_t>(n, size_hint_);
  std::string tail(take, '\0');
  const ssize_t got = ::pread(fd_, tail.data(), take, static_cast<off_t>(size_hint_ - take));
  if (got < 0) return ReadError(path_);
  tail.resize(static_cast<size_t>(got));
  return tail;
}

}  // namespace sightline::kineto
