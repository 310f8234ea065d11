#include "base/file_io.h"

#include <fmt/format.h>
#include <libdeflate.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

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
          "{}: larger than {} bytes, the limit that protects this machine's memory; if the file "
          "is genuine, raise the limit with {}=SIZE or analyze it on a larger machine",
          path, limit, kMaxInputSizeEnv));
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
    size_t guess = std::max<size_t>(static_cast<size_t>(isize), member.size() * 4);
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

namespace {

// An existing path that is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place:
// a temporary file renamed over it would replace the device with a regular file (as root, /dev/null
// itself).
bool IsSpecialFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  if (IsSpecialFile(path)) {
    ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::Open(path));
    RETURN_IF_ERROR(w.Append(contents));
    return w.Commit();
  }
  const std::string tmp = path + ".tmp";
  {
    std::unique_ptr<FILE, FileCloser> f(std::fopen(tmp.c_str(), "wb"));
    if (!f) {
      return IoError(
          fmt::format("cannot write {}: {}; check that the directory exists and is writable", path,
                      std::strerror(errno)));
    }
    if (std::fwrite(contents.data(), 1, contents.size(), f.get()) != contents.size() ||
        std::fflush(f.get()) != 0) {
      const int err = errno;
      f.reset();
      std::remove(tmp.c_str());
      return IoError(fmt::format("cannot write {}: {}", path, std::strerror(err)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return IoError(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  return Status::Ok();
}

StatusOr<AtomicFileWriter> AtomicFileWriter::Open(const std::string& path) {
  const bool direct = IsSpecialFile(path);
  std::FILE* f = std::fopen(direct ? path.c_str() : (path + ".tmp").c_str(), "wb");
  if (f == nullptr) {
    return IoError(
        fmt::format("cannot write {}: {}; check that the directory exists and is writable", path,
                    std::strerror(errno)));
  }
  return AtomicFileWriter(path, f, direct);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)), file_(other.file_), direct_(other.direct_) {
  other.file_ = nullptr;
}

AtomicFileWriter::~AtomicFileWriter() { Abandon(); }

void AtomicFileWriter::Abandon() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  if (!direct_) std::remove((path_ + ".tmp").c_str());
}

Status AtomicFileWriter::Append(std::string_view bytes) {
  if (file_ == nullptr) return IoError(fmt::format("cannot write {}: already closed", path_));
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    const int err = errno;
    Abandon();
    return IoError(fmt::format("cannot write {}: {}", path_, std::strerror(err)));
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  if (file_ == nullptr) return IoError(fmt::format("cannot write {}: already closed", path_));
  const bool flushed = std::fflush(file_) == 0;
  const int flush_err = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (direct_) {
    if (flushed && closed) return Status::Ok();
    return IoError(fmt::format("cannot write {}: {}", path_, std::strerror(flush_err)));
  }
  const std::string tmp = path_ + ".tmp";
  if (!flushed || !closed || std::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int err = !flushed ? flush_err : errno;
    std::remove(tmp.c_str());
    return IoError(fmt::format("cannot write {}: {}", path_, std::strerror(err)));
  }
  return Status::Ok();
}

}  // namespace sightline
