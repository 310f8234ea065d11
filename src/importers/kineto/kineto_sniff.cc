#include "importers/kineto/kineto_sniff.h"

#include <libdeflate.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "base/strings.h"

namespace sightline::kineto {

bool LooksLikeJsonObject(std::string_view bytes) {
  if (bytes.starts_with("\xEF\xBB\xBF")) bytes.remove_prefix(3);
  for (char c : bytes) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

namespace {

size_t SkipJsonSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsJsonSpace(s[i])) ++i;
  return i;
}

// The index after the string that starts at s[i] ('"'), or npos when it does not end in s.
size_t StringEnd(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

bool FirstFieldRunsPastHead(std::string_view head) {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  size_t i = SkipJsonSpace(head, 0);
  if (i >= head.size() || head[i] != '{') return false;
  i = SkipJsonSpace(head, i + 1);
  if (i >= head.size() || head[i] != '"') return false;
  i = StringEnd(head, i);
  if (i == std::string_view::npos) return false;  // a key longer than the head: no trace
  i = SkipJsonSpace(head, i);
  if (i >= head.size() || head[i] != ':') return false;
  i = SkipJsonSpace(head, i + 1);
  if (i >= head.size()) return false;
  if (head[i] == '"') return StringEnd(head, i) == std::string_view::npos;
  if (head[i] != '{' && head[i] != '[') return false;
  uint64_t depth = 0;
  while (i < head.size()) {
    const char c = head[i];
    if (c == '"') {
      i = StringEnd(head, i);
      if (i == std::string_view::npos) return true;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return false;  // the first field ends within the head
    }
    ++i;
  }
  return true;
}

size_t InflateGzipPrefix(std::string_view gz, char* out, size_t out_size) {
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!d || out_size == 0) return 0;
  // libdeflate reports no output count on failure, and a prefix always fails (truncated). JSON
  // text holds no NUL bytes, so the bytes before the first NUL are what was inflated.
  std::memset(out, 0, out_size);
  size_t produced = 0;
  const libdeflate_result r =
      libdeflate_gzip_decompress(d.get(), gz.data(), gz.size(), out, out_size, &produced);
  if (r == LIBDEFLATE_SUCCESS) return produced;
  return static_cast<size_t>(std::find(out, out + out_size, '\0') - out);
}

}  // namespace sightline::kineto

namespace sightline {

bool SniffKineto(std::string_view head) {
  const std::string_view body = SkipBomAndSpace(head);
  if (body.starts_with("[")) {
    const std::string_view first = SkipBomAndSpace(body.substr(1));
    const size_t end = first.find('}');
    return first.starts_with("{") && first.substr(0, end).find("\"ph\"") != std::string_view::npos;
  }
  if (!kineto::LooksLikeJsonObject(head)) return false;
  for (std::string_view key : {"\"traceEvents\"", "\"schemaVersion\"", "\"deviceProperties\"",
                               "\"displayTimeUnit\"", "\"distributedInfo\"", "\"traceName\""}) {
    if (head.find(key) != std::string_view::npos) return true;
  }
  // A first field larger than the head (metadata before traceEvents): the reader decides.
  return kineto::FirstFieldRunsPastHead(head);
}

}  // namespace sightline
