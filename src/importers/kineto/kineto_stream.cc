#include "importers/kineto/kineto_stream.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

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

// Inflates every gzip member into one buffer with 1 byte of headroom and kPadding + 1 bytes of
// scratch after the data. The size comes from the last member's ISIZE (size mod 2^32); a short
// guess (several members, or more than 4 GiB) is grown.
Status InflateGzip(std::string_view gz, const std::string& path, char** out_buffer,
                   size_t* out_capacity, size_t* out_size) {
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!d) return InternalError("cannot allocate a gzip decompressor");
  constexpr size_t kSlack = 1 + JsonStream::kPadding + 1;
  // The inflated data stays within the limit: a gzip bomb fails before the memory is taken.
  ASSIGN_OR_RETURN(const uint64_t limit64, MaxInflatedBytes());
  const size_t limit = static_cast<size_t>(std::max<uint64_t>(limit64, 4096));
  uint32_t isize = 0;
  if (gz.size() >= 4) std::memcpy(&isize, gz.data() + gz.size() - 4, 4);
  // The trailer is not trusted beyond what deflate can produce (1032 bytes per input byte).
  const size_t most = gz.size() > SIZE_MAX / 1032 ? SIZE_MAX : gz.size() * 1032;
  size_t capacity =
      std::min<size_t>(std::max<size_t>(std::min<size_t>(isize, most), 4096), limit) + kSlack;
  char* buffer = NewBuffer(capacity);
  if (!buffer) return InternalError(fmt::format("{}: out of memory ({} bytes)", path, capacity));
  size_t size = 0, in_pos = 0;
  auto fail = [&](Status s) {
    FreeBuffer(buffer);
    return s;
  };
  while (in_pos < gz.size()) {
    const std::string_view member = gz.substr(in_pos);
    if (!IsGzip(member)) {
      // Zero padding after the last member is tolerated (some tools write it).
      if (member.find_first_not_of('\0') == std::string_view::npos) break;
      return fail(InvalidInputError(fmt::format(
          "{}: {} bytes that are not gzip data follow the compressed stream; re-copy or "
          "re-export the trace",
          path, member.size())));
    }
    for (;;) {
      size_t consumed = 0, produced = 0;
      const libdeflate_result r =
          libdeflate_gzip_decompress_ex(d.get(), member.data(), member.size(), buffer + 1 + size,
                                        capacity - kSlack - size, &consumed, &produced);
      if (r == LIBDEFLATE_SUCCESS) {
        size += produced;
        in_pos += consumed;
        break;
      }
      if (r != LIBDEFLATE_INSUFFICIENT_SPACE) {
        return fail(InvalidInputError(fmt::format(
            "{}: the gzip data is truncated or corrupt (inflating failed {} bytes into the "
            "file); let the profiler finish writing it, or re-copy / re-export the trace",
            path, in_pos)));
      }
      if (capacity - kSlack >= limit) return fail(InflatedTooLargeError(path, gz.size(), limit64));
      const size_t grown = std::min((capacity - kSlack) * 2, limit) + kSlack;
      char* bigger = NewBuffer(grown);
      if (!bigger) return fail(InternalError(fmt::format("{}: out of memory", path)));
      std::memcpy(bigger, buffer, 1 + size);
      FreeBuffer(buffer);
      buffer = bigger;
      capacity = grown;
    }
  }
  *out_buffer = buffer;
  *out_capacity = capacity;
  *out_size = size;
  return Status::Ok();
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
  if (CompressionOf(std::string_view(magic, std::min<size_t>(4, file_size))) ==
      Compression::kZstd) {
    ::close(s->fd_);
    s->fd_ = -1;
    ASSIGN_OR_RETURN(std::string text, ReadInput(path));
    if (text.empty())
      return InvalidInputError(fmt::format("{}: the zstd file holds no data", path));
    s->capacity_ = 1 + text.size() + kPadding + 1;
    s->buf_ = NewBuffer(s->capacity_);
    if (!s->buf_) return InternalError(fmt::format("{}: out of memory", path));
    std::memcpy(s->buf_ + 1, text.data(), text.size());
    s->end_ = 1 + text.size();
    s->gzip_ = true;  // all in memory, as for gzip
    s->eof_ = true;
    s->size_hint_ = text.size();
    return s;
  }
  if (IsGzip(std::string_view(magic, std::min<size_t>(2, file_size)))) {
    {
      // The compressed bytes live only while inflating.
      std::unique_ptr<char, decltype(&FreeBuffer)> gz(NewBuffer(file_size), &FreeBuffer);
      if (!gz) return InternalError(fmt::format("{}: out of memory", path));
      const ssize_t got = ReadFully(s->fd_, gz.get(), file_size);
      if (got < 0) return ReadError(path);
      size_t size = 0;
      RETURN_IF_ERROR(InflateGzip(std::string_view(gz.get(), static_cast<size_t>(got)), path,
                                  &s->buf_, &s->capacity_, &size));
      s->end_ = 1 + size;
    }
    ::close(s->fd_);
    s->fd_ = -1;
    s->gzip_ = true;
    s->eof_ = true;
    s->size_hint_ = s->end_ - 1;
    if (s->size_hint_ == 0) {
      return InvalidInputError(fmt::format("{}: the gzip file holds no data", path));
    }
    return s;
  }
  s->size_hint_ = file_size;
  if (std::getenv(kMapEnv) != nullptr && s->MapFile(file_size)) return s;
  s->capacity_ = std::min(file_size, kFileBuffer) + 1 + kPadding + 1;
  s->buf_ = NewBuffer(s->capacity_);
  if (!s->buf_) return InternalError(fmt::format("{}: out of memory", path));
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

Status JsonStream::ReadMore() {
  const size_t room = capacity_ - kPadding - 1 - end_;
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
    if (!bigger) return InternalError(fmt::format("{}: out of memory", path_));
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
  if (gzip_) return Status::Ok();
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
  if (gzip_ || map_base_ != nullptr) {
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
