// A small binary codec for the blobs that carry per-rank results between processes (MPI) or
// threads: little-endian fixed-width integers, doubles bit for bit, length-prefixed strings. The
// reader never reads past its input: a short or corrupt blob is a Status, not a crash.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "base/status.h"

namespace sightline {

class ByteWriter {
 public:
  template <typename T>
  void Put(T v) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));  // the machines of one job share byte order
    out_.append(b, sizeof(T));
  }
  void PutString(std::string_view s) {
    Put<uint64_t>(s.size());
    out_.append(s.data(), s.size());
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  template <typename T>
  T Get() {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
    T v{};
    if (!Need(sizeof(T))) return v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string GetString() {
    const uint64_t n = Get<uint64_t>();
    if (!Need(n)) return {};
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // A count of items that each take at least `min_bytes`: 0 (and failed) when the blob cannot
  // hold that many, so a corrupt count never allocates.
  uint64_t GetCount(size_t min_bytes = 1) {
    const uint64_t n = Get<uint64_t>();
    if (ok_ && n > (in_.size() - pos_) / (min_bytes ? min_bytes : 1)) {
      ok_ = false;
      return 0;
    }
    return ok_ ? n : 0;
  }
  // Marks the blob malformed (a value the reader cannot take, e.g. an unknown enum index).
  void Fail() { ok_ = false; }
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  // Ok when every read succeeded and the blob was read to its end.
  Status Finish(std::string_view what) const {
    if (ok_ && at_end()) return Status::Ok();
    return InternalError(std::string(what) + ": malformed blob (truncated or of another version)");
  }

 private:
  bool Need(uint64_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace sightline
