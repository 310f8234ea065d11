#include "base/decompressor.h"

#include <fmt/format.h>
#include <libdeflate.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <optional>
#include <utility>

#include "base/input_limits.h"

namespace sightline {
namespace {

constexpr size_t kInputBuffer = size_t{256} << 10;
constexpr const char* kRecopy =
    "if a tool is still writing it, let it finish; otherwise re-copy or re-compress the file";

bool IsGzipMagic(const char* p) {
  return static_cast<unsigned char>(p[0]) == 0x1f && static_cast<unsigned char>(p[1]) == 0x8b;
}

const char* NameOf(Compression c) { return c == Compression::kZstd ? "zstd" : "gzip"; }

// ---- gzip (zlib, one member after another) ----

class GzipDecompressor final : public Decompressor {
 public:
  GzipDecompressor(Source source, std::string what, uint64_t limit, uint64_t compressed_bytes)
      : Decompressor(std::move(source), std::move(what), limit, compressed_bytes,
                     Compression::kGzip) {}
  ~GzipDecompressor() override {
    if (started_) inflateEnd(&z_);
  }

  Status Init() {
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) {
      return InternalError("cannot start a gzip decompressor (out of memory)");
    }
    started_ = true;
    return Status::Ok();
  }

  StatusOr<size_t> Read(char* out, size_t n) override {
    size_t written = 0;
    while (written < n && !ended_) {
      if (!in_member_) {
        ASSIGN_OR_RETURN(const bool member, StartMember());
        if (!member) break;
      }
      if (available() == 0) {
        ASSIGN_OR_RETURN(const bool more, Fill(1));
        if (!more) {
          if (input_cut_) {
            cut_ = ended_ = true;
            break;
          }
          return InvalidInputError(fmt::format(
              "{}: the gzip data is truncated: the file ends inside compressed data after {} "
              "bytes; {}",
              what_, offset(), kRecopy));
        }
      }
      // One byte past the limit is enough to know it is passed.
      const uint64_t allowed = limit_ - std::min(limit_, produced_) + 1;
      const size_t room = static_cast<size_t>(std::min<uint64_t>({n - written, allowed, UINT_MAX}));
      const size_t in_now = std::min<size_t>(available(), UINT_MAX);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(next()));
      z_.avail_in = static_cast<uInt>(in_now);
      z_.next_out = reinterpret_cast<Bytef*>(out + written);
      z_.avail_out = static_cast<uInt>(room);
      const int r = inflate(&z_, Z_NO_FLUSH);
      in_pos_ += in_now - z_.avail_in;
      const size_t got = room - z_.avail_out;
      written += got;
      RETURN_IF_ERROR(Count(got));
      if (r == Z_STREAM_END) {
        in_member_ = false;
        continue;
      }
      if (r == Z_BUF_ERROR && got == 0 && z_.avail_in > 0 && room > 0) {
        return InvalidInputError(fmt::format(
            "{}: the gzip data is corrupt (no progress near compressed byte {}); re-copy or "
            "re-compress the file",
            what_, offset()));
      }
      if (r == Z_OK || r == Z_BUF_ERROR) continue;  // more output room or more input needed
      if (r == Z_MEM_ERROR) return OutOfMemoryForInputError(what_, produced_);
      return InvalidInputError(fmt::format(
          "{}: the gzip data is corrupt ({}, near compressed byte {}); re-copy or re-compress the "
          "file",
          what_, z_.msg != nullptr ? z_.msg : "inflate failed", offset()));
    }
    return written;
  }

 private:
  // At a member's start (or the end): false when the content has ended. Zero padding after the
  // last member is tolerated (some tools write it); anything else that is not a gzip member is
  // an error, and so is a header field that runs on.
  StatusOr<bool> StartMember() {
    ASSIGN_OR_RETURN(const bool any, Fill(2));
    if (available() == 0 || (!any && input_cut_)) {
      cut_ = input_cut_;  // cut at a member's end: more members may follow
      ended_ = true;
      return false;
    }
    if (available() >= 2 && IsGzipMagic(next())) {
      RETURN_IF_ERROR(CheckHeader());
      if (ended_) return false;
      inflateReset(&z_);
      in_member_ = true;
      return true;
    }
    if (members_ == 0 && available() < 2) {
      return InvalidInputError(fmt::format("{}: the gzip data is truncated: {}", what_, kRecopy));
    }
    // Zeros to the end are padding.
    const uint64_t at = offset();
    for (;;) {
      const char* p = next();
      const size_t k = available();
      if (std::find_if(p, p + k, [](char c) { return c != '\0'; }) != p + k) {
        return InvalidInputError(fmt::format(
            "{}: bytes that are not gzip data follow the compressed data (from byte {}); re-copy "
            "the file, or keep only its gzip part",
            what_, at));
      }
      in_pos_ = in_end_;
      ASSIGN_OR_RETURN(const bool more, Fill(1));
      if (!more) break;
    }
    ended_ = true;
    return false;
  }

  // Validates a member's header before zlib reads it: the method, reserved flags, and that the
  // optional file name and comment end within kMaxGzipHeaderField bytes (a 20 MB name is no
  // gzip file; zlib would skip it silently and a head would come out empty).
  Status CheckHeader() {
    ASSIGN_OR_RETURN(bool have, Fill(10));
    if (!have) return TruncatedHeader();
    const unsigned char method = static_cast<unsigned char>(next()[2]);
    const unsigned char flags = static_cast<unsigned char>(next()[3]);
    if (method != 8 || (flags & 0xe0) != 0) {
      return InvalidInputError(fmt::format(
          "{}: the gzip header at byte {} is damaged ({}); re-copy or re-compress the file", what_,
          offset(),
          method != 8 ? fmt::format("compression method {}, not deflate", method)
                      : std::string("reserved flag bits set")));
    }
    size_t at = 10;
    if (flags & 0x04) {  // FEXTRA: two bytes of length, then the field
      ASSIGN_OR_RETURN(have, Fill(at + 2));
      if (!have) return TruncatedHeader();
      const size_t xlen = static_cast<unsigned char>(next()[at]) |
                          (static_cast<size_t>(static_cast<unsigned char>(next()[at + 1])) << 8);
      at += 2 + xlen;
    }
    for (const auto& [bit, field] : {std::pair{0x08, "file name field (FNAME)"},
                                     std::pair{0x10, "comment field (FCOMMENT)"}}) {
      if ((flags & bit) == 0) continue;
      size_t end = at;
      for (;;) {
        ASSIGN_OR_RETURN(have, Fill(end + 1));
        const size_t scan_to = std::min(available(), at + kMaxGzipHeaderField);
        const void* nul = end < scan_to ? std::memchr(next() + end, 0, scan_to - end) : nullptr;
        if (nul != nullptr) {
          end = static_cast<size_t>(static_cast<const char*>(nul) - next());
          break;
        }
        end = scan_to;
        if (end - at >= kMaxGzipHeaderField) {
          return InvalidInputError(fmt::format(
              "{}: the gzip header's {} runs on for more than {} bytes without ending (at byte "
              "{}): gzip stores a short file name or comment there, so the file is damaged or "
              "was not made by gzip. Re-compress the original file (gzip -k FILE), or re-copy "
              "it",
              what_, field, kMaxGzipHeaderField, offset() + at));
        }
        if (!have) return TruncatedHeader();
      }
      at = end + 1;
    }
    if (flags & 0x02) at += 2;  // FHCRC
    ASSIGN_OR_RETURN(have, Fill(at));
    if (!have) return TruncatedHeader();
    ++members_;
    return Status::Ok();
  }

  Status TruncatedHeader() {
    if (input_cut_) {
      cut_ = ended_ = true;
      return Status::Ok();
    }
    return InvalidInputError(fmt::format(
        "{}: the gzip data is truncated: the file ends inside the header of a gzip member (at "
        "byte {}); {}",
        what_, offset(), kRecopy));
  }

  z_stream z_{};
  bool started_ = false;
  bool in_member_ = false;
  bool ended_ = false;
  int members_ = 0;
};

// ---- zstd (frames one after another; skippable frames are skipped) ----

class ZstdDecompressor final : public Decompressor {
 public:
  ZstdDecompressor(Source source, std::string what, uint64_t limit, uint64_t compressed_bytes)
      : Decompressor(std::move(source), std::move(what), limit, compressed_bytes,
                     Compression::kZstd) {}
  ~ZstdDecompressor() override { ZSTD_freeDCtx(d_); }

  Status Init() {
    d_ = ZSTD_createDCtx();
    if (d_ == nullptr) return InternalError("cannot start a zstd decompressor (out of memory)");
    return Status::Ok();
  }

  StatusOr<size_t> Read(char* out, size_t n) override {
    size_t written = 0;
    while (written < n && !ended_) {
      if (available() == 0) {
        ASSIGN_OR_RETURN(const bool more, Fill(1));
        if (!more) {
          ended_ = true;
          if (pending_ == 0 && frames_ > 0) break;  // the last frame ended
          if (input_cut_) {
            cut_ = true;
            break;
          }
          return InvalidInputError(fmt::format(
              "{}: the zstd data is truncated: the file ends inside a zstd frame after {} bytes "
              "(the last frame does not end); {}",
              what_, offset(), kRecopy));
        }
      }
      const uint64_t allowed = limit_ - std::min(limit_, produced_) + 1;
      const size_t room = static_cast<size_t>(std::min<uint64_t>(n - written, allowed));
      ZSTD_inBuffer in{next(), available(), 0};
      ZSTD_outBuffer o{out + written, room, 0};
      const bool at_frame_start = pending_ == 0;
      const size_t r = ZSTD_decompressStream(d_, &o, &in);
      in_pos_ += in.pos;
      written += o.pos;
      RETURN_IF_ERROR(Count(o.pos));
      if (ZSTD_isError(r)) return Corrupt(r, at_frame_start);
      if (r == 0) ++frames_;
      pending_ = r;
    }
    return written;
  }

 private:
  Status Corrupt(size_t r, bool at_frame_start) {
    const ZSTD_ErrorCode code = ZSTD_getErrorCode(r);
    if (code == ZSTD_error_frameParameter_windowTooLarge) {
      return InvalidInputError(fmt::format(
          "{}: the zstd data needs a window of more than {} MiB (it was compressed with --long "
          "or --ultra); decompress it first with `zstd -d --long=31 FILE`, and analyze the "
          "result",
          what_, size_t{128}));
    }
    if (code == ZSTD_error_prefix_unknown && at_frame_start && frames_ > 0) {
      return InvalidInputError(
          fmt::format("{}: bytes that are not zstd data follow the compressed data at byte {}; "
                      "re-copy the file, or keep only its first part",
                      what_, offset()));
    }
    return InvalidInputError(fmt::format(
        "{}: the zstd data is corrupt ({}, near compressed byte {}); re-copy or re-compress the "
        "file",
        what_, ZSTD_getErrorName(r), offset()));
  }

  ZSTD_DCtx* d_ = nullptr;
  size_t pending_ = 0;  // nonzero: inside a frame
  int frames_ = 0;
  bool ended_ = false;
};

}  // namespace

Decompressor::Decompressor(Source source, std::string what, uint64_t limit,
                           uint64_t compressed_bytes, Compression compression)
    : source_(std::move(source)),
      what_(std::move(what)),
      limit_(limit),
      compressed_bytes_(compressed_bytes),
      compression_(compression),
      in_(kInputBuffer, '\0') {}

StatusOr<bool> Decompressor::Fill(size_t at_least) {
  if (available() >= at_least) return true;
  if (in_pos_ > 0) {
    std::memmove(in_.data(), in_.data() + in_pos_, available());
    consumed_before_ += in_pos_;
    in_end_ -= in_pos_;
    in_pos_ = 0;
  }
  if (in_.size() < at_least) in_.resize(at_least);
  while (available() < at_least && !input_ended_) {
    ASSIGN_OR_RETURN(const size_t got, source_(in_.data() + in_end_, in_.size() - in_end_));
    if (got == 0) {
      input_ended_ = true;
    } else {
      in_end_ += got;
    }
  }
  return available() >= at_least;
}

Status Decompressor::Count(size_t n) {
  produced_ += n;
  if (produced_ > limit_) {
    return InflatedTooLargeError(what_, compressed_bytes_, limit_, NameOf(compression_));
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<Decompressor>> Decompressor::Create(Compression compression, Source source,
                                                             std::string what, uint64_t limit,
                                                             uint64_t compressed_bytes) {
  if (compression == Compression::kZstd) {
    auto d = std::make_unique<ZstdDecompressor>(std::move(source), std::move(what), limit,
                                                compressed_bytes);
    RETURN_IF_ERROR(d->Init());
    return std::unique_ptr<Decompressor>(std::move(d));
  }
  if (compression != Compression::kGzip) return InternalError("Decompressor: not compressed");
  auto d = std::make_unique<GzipDecompressor>(std::move(source), std::move(what), limit,
                                              compressed_bytes);
  RETURN_IF_ERROR(d->Init());
  return std::unique_ptr<Decompressor>(std::move(d));
}

StatusOr<std::unique_ptr<Decompressor>> Decompressor::OverBytes(Compression compression,
                                                                std::string_view bytes,
                                                                std::string what, uint64_t limit) {
  auto pos = std::make_shared<size_t>(0);
  Source source = [bytes, pos](char* buf, size_t n) -> StatusOr<size_t> {
    const size_t k = std::min(n, bytes.size() - *pos);
    std::memcpy(buf, bytes.data() + *pos, k);
    *pos += k;
    return k;
  };
  return Create(compression, std::move(source), std::move(what), limit, bytes.size());
}

namespace {

// Whether the first member's header holds a file name and comment of at most kMaxGzipHeaderField
// bytes each (the streaming reader refuses longer ones, and says so).
bool HeaderFieldsAreShort(std::string_view gz) {
  if (gz.size() < 10) return false;
  const unsigned char flags = static_cast<unsigned char>(gz[3]);
  size_t at = 10;
  if (flags & 0x04) {
    if (gz.size() < at + 2) return false;
    at += 2 + (static_cast<unsigned char>(gz[at]) |
               (static_cast<size_t>(static_cast<unsigned char>(gz[at + 1])) << 8));
  }
  for (const int bit : {0x08, 0x10}) {
    if ((flags & bit) == 0) continue;
    if (at >= gz.size()) return false;
    const size_t end = gz.find('\0', at);
    if (end == std::string_view::npos || end - at >= kMaxGzipHeaderField) return false;
    at = end + 1;
  }
  return true;
}

// One libdeflate pass into a buffer of the size the trailer states, when that size is plausible:
// the common single-member file < 4 GiB is then decompressed once. nullopt: not taken (several
// members, a trailer that lies, a size beyond what is trusted); the caller counts first instead.
std::optional<std::string> TryGzipAtTrailerSize(std::string_view gz, uint64_t limit) {
  if (gz.size() < 18) return std::nullopt;
  uint32_t isize = 0;
  std::memcpy(&isize, gz.data() + gz.size() - 4, 4);
  const uint64_t most = static_cast<uint64_t>(gz.size()) * 1032;
  if (isize == 0 || isize > std::min({limit, kTrustedTrailerBytes, most})) return std::nullopt;
  if (!HeaderFieldsAreShort(gz)) return std::nullopt;
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!d) return std::nullopt;
  std::string out;
  try {
    out.resize(isize);
  } catch (const std::bad_alloc&) {
    return std::nullopt;
  }
  size_t consumed = 0, produced = 0;
  const libdeflate_result r = libdeflate_gzip_decompress_ex(
      d.get(), gz.data(), gz.size(), out.data(), isize, &consumed, &produced);
  if (r != LIBDEFLATE_SUCCESS || produced != isize) return std::nullopt;
  const std::string_view rest = gz.substr(consumed);
  if (rest.find_first_not_of('\0') != std::string_view::npos) return std::nullopt;
  return out;
}

}  // namespace

StatusOr<std::string> DecompressToString(Compression compression, std::string_view bytes,
                                         const std::string& what) {
  ASSIGN_OR_RETURN(const uint64_t limit, MaxInflatedBytes());
  if (compression == Compression::kGzip) {
    if (std::optional<std::string> out = TryGzipAtTrailerSize(bytes, limit)) {
      return std::move(*out);
    }
  }
  // Count first: nothing of the content is kept, so a bomb stops at the limit having taken only
  // the scratch buffer.
  uint64_t total = 0;
  {
    ASSIGN_OR_RETURN(std::unique_ptr<Decompressor> d,
                     Decompressor::OverBytes(compression, bytes, what, limit));
    std::string scratch(size_t{256} << 10, '\0');
    for (;;) {
      ASSIGN_OR_RETURN(const size_t got, d->Read(scratch.data(), scratch.size()));
      if (got == 0) break;
    }
    total = d->produced();
  }
  std::string out;
  try {
    out.resize(static_cast<size_t>(total));
  } catch (const std::bad_alloc&) {
    return OutOfMemoryForInputError(what, total);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Decompressor> d,
                   Decompressor::OverBytes(compression, bytes, what, limit));
  size_t at = 0;
  while (at < out.size()) {
    ASSIGN_OR_RETURN(const size_t got, d->Read(out.data() + at, out.size() - at));
    if (got == 0) break;
    at += got;
  }
  if (at != out.size()) {
    return InternalError(fmt::format("{}: decompressed to {} bytes, then to {}", what, total, at));
  }
  return out;
}

}  // namespace sightline
