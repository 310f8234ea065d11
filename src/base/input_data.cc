#include "base/input_data.h"

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/file_io.h"
#include "base/input_limits.h"

namespace sightline {
namespace {

constexpr unsigned char kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};

bool IsZstd(std::string_view bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kZstdMagic, 4) == 0;
}

// A skippable frame: magic 0x184D2A5? little-endian.
bool IsSkippableZstd(std::string_view bytes) {
  return bytes.size() >= 4 && (static_cast<unsigned char>(bytes[0]) & 0xf0) == 0x50 &&
         static_cast<unsigned char>(bytes[1]) == 0x2a &&
         static_cast<unsigned char>(bytes[2]) == 0x4d &&
         static_cast<unsigned char>(bytes[3]) == 0x18;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

Compression CompressionOf(std::string_view first_bytes) {
  if (IsGzip(first_bytes)) return Compression::kGzip;
  if (IsZstd(first_bytes) || IsSkippableZstd(first_bytes)) return Compression::kZstd;
  return Compression::kNone;
}

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kGzip:
      return "gzip";
    case Compression::kZstd:
      return "zstd";
    case Compression::kNone:
      break;
  }
  return "none";
}

StatusOr<std::string> UnzstdToString(std::string_view zst, const std::string& what) {
  ASSIGN_OR_RETURN(const uint64_t limit, MaxInflatedBytes());
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> d(ZSTD_createDStream(),
                                                               &ZSTD_freeDStream);
  if (!d) return InternalError("cannot allocate a zstd decompressor");
  // Never trust a frame's stated size for the allocation: grow as the output comes.
  std::string out;
  ZSTD_inBuffer in{zst.data(), zst.size(), 0};
  size_t pending = 0;  // nonzero: a frame is not finished
  for (;;) {
    if (out.capacity() - out.size() < ZSTD_DStreamOutSize()) {
      out.reserve(std::max<size_t>(out.capacity() * 2, ZSTD_DStreamOutSize() * 4));
    }
    const size_t base = out.size();
    const size_t room = out.capacity() - base;
    out.resize(base + room);
    ZSTD_outBuffer o{out.data() + base, room, 0};
    pending = ZSTD_decompressStream(d.get(), &o, &in);
    out.resize(base + o.pos);
    if (ZSTD_isError(pending)) {
      return InvalidInputError(fmt::format(
          "{}: the zstd data is corrupt ({} after {} input bytes); re-copy or re-compress the "
          "file",
          what, ZSTD_getErrorName(pending), in.pos));
    }
    if (out.size() > limit) return InflatedTooLargeError(what, zst.size(), limit);
    // A full output buffer may leave decompressed bytes inside the stream: go round again.
    if (in.pos == in.size && o.pos < o.size) break;
  }
  if (pending != 0) {
    return InvalidInputError(
        fmt::format("{}: the zstd data is truncated (the last frame does not end); re-copy or "
                    "re-compress the file",
                    what));
  }
  return out;
}

StatusOr<std::string> DecompressInput(std::string bytes, const std::string& what) {
  switch (CompressionOf(bytes)) {
    case Compression::kGzip:
      return GunzipToString(bytes, what);
    case Compression::kZstd:
      return UnzstdToString(bytes, what);
    case Compression::kNone:
      break;
  }
  return bytes;
}

StatusOr<std::string> ReadInput(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return DecompressInput(std::move(bytes), path);
}

namespace {

// Decompresses from `f` until `n` bytes came out or the input ends; at most kMaxRaw bytes of
// compressed input are read (a head is for recognising the format, not for reading it).
constexpr size_t kMaxRaw = 16u << 20;

Status GzipHead(std::FILE* f, std::string prefix, size_t n, InputHead& head,
                const std::string& path) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return InternalError("cannot start inflating");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, &inflateEnd);
  head.bytes.assign(n, '\0');
  size_t produced = 0, raw = prefix.size();
  std::string in = std::move(prefix);
  char buf[1 << 16];
  bool eof = false;
  z.next_in = reinterpret_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  while (produced < n) {
    if (z.avail_in == 0) {
      if (eof || raw >= kMaxRaw) break;
      const size_t got = std::fread(buf, 1, sizeof buf, f);
      if (got == 0) {
        eof = true;
        continue;
      }
      raw += got;
      in.assign(buf, got);
      z.next_in = reinterpret_cast<Bytef*>(in.data());
      z.avail_in = static_cast<uInt>(got);
    }
    z.next_out = reinterpret_cast<Bytef*>(head.bytes.data() + produced);
    z.avail_out = static_cast<uInt>(n - produced);
    const int r = inflate(&z, Z_SYNC_FLUSH);
    produced = n - z.avail_out;
    if (r == Z_STREAM_END) {
      // Another member may follow (concatenated gzip); anything else ends the content.
      if (z.avail_in == 0) {
        const size_t got = std::fread(buf, 1, sizeof buf, f);
        if (got == 0) {
          head.whole = true;
          break;
        }
        in.assign(buf, got);
        z.next_in = reinterpret_cast<Bytef*>(in.data());
        z.avail_in = static_cast<uInt>(got);
      }
      if (!IsGzip(std::string_view(reinterpret_cast<const char*>(z.next_in), z.avail_in))) {
        head.whole = true;
        break;
      }
      inflateReset(&z);
      continue;
    }
    if (r == Z_BUF_ERROR && z.avail_in == 0) continue;  // needs more input
    if (r != Z_OK) {
      return InvalidInputError(fmt::format(
          "{}: the gzip data is corrupt at its start ({}); re-copy or re-export the file", path,
          z.msg != nullptr ? z.msg : "inflate failed"));
    }
  }
  head.bytes.resize(produced);
  return Status::Ok();
}

Status ZstdHead(std::FILE* f, std::string prefix, size_t n, InputHead& head,
                const std::string& path) {
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> d(ZSTD_createDStream(),
                                                               &ZSTD_freeDStream);
  if (!d) return InternalError("cannot allocate a zstd decompressor");
  head.bytes.assign(n, '\0');
  std::string in = std::move(prefix);
  ZSTD_inBuffer zin{in.data(), in.size(), 0};
  ZSTD_outBuffer out{head.bytes.data(), n, 0};
  size_t raw = in.size();
  char buf[1 << 16];
  size_t pending = 1;
  while (out.pos < n) {
    if (zin.pos == zin.size) {
      const size_t got = raw >= kMaxRaw ? 0 : std::fread(buf, 1, sizeof buf, f);
      if (got == 0) {
        head.whole = pending == 0;
        break;
      }
      raw += got;
      in.assign(buf, got);
      zin = {in.data(), in.size(), 0};
    }
    pending = ZSTD_decompressStream(d.get(), &out, &zin);
    if (ZSTD_isError(pending)) {
      return InvalidInputError(
          fmt::format("{}: the zstd data is corrupt at its start ({}); re-copy or re-compress "
                      "the file",
                      path, ZSTD_getErrorName(pending)));
    }
  }
  head.bytes.resize(out.pos);
  return Status::Ok();
}

}  // namespace

StatusOr<InputHead> ReadInputHead(const std::string& path, size_t n) {
  ASSIGN_OR_RETURN(std::string raw, ReadFilePrefix(path, n));
  InputHead head;
  head.compression = CompressionOf(raw);
  if (head.compression == Compression::kNone) {
    head.whole = raw.size() < n;
    head.bytes = std::move(raw);
    return head;
  }
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  if (std::fseek(f.get(), static_cast<long>(raw.size()), SEEK_SET) != 0) {
    return IoError(fmt::format("{}: cannot seek: {}", path, std::strerror(errno)));
  }
  if (head.compression == Compression::kGzip) {
    RETURN_IF_ERROR(GzipHead(f.get(), std::move(raw), n, head, path));
  } else {
    RETURN_IF_ERROR(ZstdHead(f.get(), std::move(raw), n, head, path));
  }
  return head;
}

}  // namespace sightline
