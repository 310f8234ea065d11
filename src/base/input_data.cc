#include "base/input_data.h"

#include <fmt/format.h>

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

struct InputFileCloser {
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
  return DecompressToString(Compression::kZstd, zst, what);
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

// A head is for recognising the format, not for reading it: at most this much compressed input
// is read for it.
constexpr size_t kMaxRaw = 16u << 20;

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
  std::unique_ptr<std::FILE, InputFileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  ASSIGN_OR_RETURN(const uint64_t limit, MaxInflatedBytes());
  // The file from its start again, up to kMaxRaw bytes.
  size_t raw_total = 0;
  Decompressor* decompressor = nullptr;
  std::FILE* file = f.get();
  Decompressor::Source source = [&](char* buf, size_t want) -> StatusOr<size_t> {
    const size_t k = std::fread(buf, 1, std::min(want, kMaxRaw - raw_total), file);
    if (k == 0 && std::ferror(file)) return IoError(fmt::format("{}: read failed", path));
    raw_total += k;
    if (raw_total >= kMaxRaw) decompressor->MarkInputCut();
    return k;
  };
  ASSIGN_OR_RETURN(std::unique_ptr<Decompressor> d,
                   Decompressor::Create(head.compression, std::move(source), path, limit, 0));
  decompressor = d.get();
  head.bytes.assign(n, '\0');
  size_t produced = 0;
  while (produced < n) {
    ASSIGN_OR_RETURN(const size_t got, d->Read(head.bytes.data() + produced, n - produced));
    if (got == 0) {
      head.whole = !d->cut();
      break;
    }
    produced += got;
  }
  head.bytes.resize(produced);
  return head;
}

}  // namespace sightline
