#include "importers/kineto/kineto_events_reader.h"

#include <fmt/format.h>

#include <cstring>
#include <utility>

#include "base/strings.h"
#include "importers/kineto/kineto_read_event.h"

namespace sightline::kineto {
namespace {

using simdjson::error_code;
using simdjson::SUCCESS;

static_assert(JsonStream::kPadding >= simdjson::SIMDJSON_PADDING);

constexpr size_t kMaxWindow = size_t{1} << 31;  // simdjson indexes with 32-bit offsets
constexpr int kMaxCutRetries = 16;

// One past the last '}' in data[0, end), or 0.
size_t LastCloseBrace(const char* data, size_t end) {
  const void* p = ::memrchr(data, '}', end);
  return p ? static_cast<size_t>(static_cast<const char*>(p) - data) + 1 : 0;
}

// One past the '}' of the last "}<ws>,<ws>{" in data[0, end) -- the seam between two events, which
// a lone '}' often is not (kernel names hold "{lambda(float)#1}") -- or, when there is none, one
// past the last '}'; 0 when there is no '}' at all.
size_t LastCut(const char* data, size_t end) {
  size_t open = end;
  while (const void* p = open > 0 ? ::memrchr(data, '{', open) : nullptr) {
    open = static_cast<size_t>(static_cast<const char*>(p) - data);
    size_t i = open;
    while (i > 0 && IsJsonSpace(data[i - 1])) --i;
    if (i == 0 || data[i - 1] != ',') continue;
    --i;
    while (i > 0 && IsJsonSpace(data[i - 1])) --i;
    if (i > 0 && data[i - 1] == '}') return i;
  }
  return LastCloseBrace(data, end);
}

// Writes a byte for the lifetime of the object.
class ScopedByte {
 public:
  ScopedByte(char* at, char value) : at_(at), saved_(*at) { *at = value; }
  ~ScopedByte() { *at_ = saved_; }
  ScopedByte(const ScopedByte&) = delete;
  ScopedByte& operator=(const ScopedByte&) = delete;

 private:
  char* at_;
  char saved_;
};

// Skips whitespace; returns the next byte without consuming it, or 0 at the end of the file.
StatusOr<char> PeekNonSpace(JsonStream& stream) {
  for (;;) {
    if (stream.size() == 0) {
      RETURN_IF_ERROR(stream.Fill(1 << 16));
      if (stream.size() == 0) return '\0';
    }
    const char* d = stream.data();
    size_t i = 0;
    while (i < stream.size() && IsJsonSpace(d[i])) ++i;
    stream.Consume(i);
    if (stream.size() > 0) return stream.data()[0];
  }
}

}  // namespace

Status EventsReader::JsonError(const JsonStream& stream, const char* data, const char* at,
                               const char* what) {
  return InvalidInputError(fmt::format(
      "{}: malformed JSON in traceEvents near byte {}{} ({}); the trace is truncated or corrupt: "
      "let the profiler finish writing it, or re-copy / re-export it",
      path_, stream.offset() + static_cast<uint64_t>(at - data),
      stream.gzip() ? " of the inflated JSON" : "", what));
}

Status EventsReader::Read(JsonStream& stream, EventMapper& mapper) {
  size_t window = std::max<size_t>(window_bytes_, 16);
  bool before_separator = false;
  for (;;) {
    ASSIGN_OR_RETURN(char c, PeekNonSpace(stream));
    if (c == ']') {
      stream.Consume(1);
      return Status::Ok();
    }
    if (before_separator) {
      if (c != ',') {
        return JsonError(stream, stream.data(), stream.data(),
                         "expected ',' or ']' after an event");
      }
      stream.Consume(1);
      ASSIGN_OR_RETURN(c, PeekNonSpace(stream));
      before_separator = false;
    }
    if (c == '\0') {
      return JsonError(stream, stream.data(), stream.data(), "the file ends inside traceEvents");
    }
    RETURN_IF_ERROR(stream.Fill(window));
    const size_t available = stream.size();
    const bool final = !stream.more() && available <= window;
    ASSIGN_OR_RETURN(WindowResult r,
                     ParseWindow(stream, std::min(available, window), final, mapper));
    switch (r.outcome) {
      case Outcome::kArrayEnded:
        stream.Consume(r.consumed);
        return Status::Ok();
      case Outcome::kContinue:
        stream.Consume(r.consumed);
        before_separator = r.before_separator;
        break;
      case Outcome::kGrow:
        if (window >= kMaxWindow) {
          return InvalidInputError(
              fmt::format("{}: a trace event near byte {} is larger than {} bytes or malformed",
                          path_, stream.offset(), kMaxWindow));
        }
        window *= 2;
        break;
    }
  }
}

StatusOr<EventsReader::WindowResult> EventsReader::ParseWindow(JsonStream& stream, size_t limit,
                                                               bool final, EventMapper& mapper) {
  char* const data = stream.data();
  // The last window takes everything (through the end of the top-level object).
  size_t cut = final ? LastCloseBrace(data, limit) : LastCut(data, limit);
  for (int attempt = 0;; ++attempt) {
    if (cut == 0) {
      if (final) return JsonError(stream, data, data, "an event without its closing '}'");
      return WindowResult{Outcome::kGrow};
    }
    // "[" + data[0, cut) + "]"; the bytes after the ']' are readable (stream padding or data).
    ScopedByte open(data - 1, '[');
    ScopedByte close(data + cut, ']');
    sj::document doc;
    sj::array array;
    error_code e = parser_.iterate(data - 1, cut + 2, cut + 2 + JsonStream::kPadding).get(doc);
    if (e == SUCCESS) e = doc.get_array().get(array);
    if (e != SUCCESS) {
      // A cut inside a string leaves it unclosed: try the '}' before (outside a string again).
      if (final) return JsonError(stream, data, data, simdjson::error_message(e));
      if (attempt >= kMaxCutRetries) return WindowResult{Outcome::kGrow};
      cut = LastCut(data, cut - 1);
      continue;
    }

    size_t mapped = 0;
    const char* after_last = data;  // the token after the last mapped element
    const char* failed_at = nullptr;
    error_code failure = SUCCESS;
    for (auto element : array) {
      sj::value value;
      if ((failure = std::move(element).get(value)) != SUCCESS) break;
      const char* start = value.raw_json_token().data();
      if ((failure = ReadEvent(value, &event_)) != SUCCESS) {
        failed_at = start;
        break;
      }
      mapper.Map(event_);
      ++mapped;
      const char* next = nullptr;
      if (doc.current_location().get(next) == SUCCESS) after_last = next;
    }
    if (failure != SUCCESS) {
      const char* at = failed_at ? failed_at : after_last;
      if (final) return JsonError(stream, data, at, simdjson::error_message(failure));
      // Nothing usable in this window: the first element is bigger than it (or malformed).
      if (mapped == 0) return WindowResult{Outcome::kGrow};
      // Otherwise the last element was cut by the window's end: start the next window there.
      return WindowResult{Outcome::kContinue, static_cast<size_t>(at - data), failed_at == nullptr};
    }
    const char* next = nullptr;
    if (doc.current_location().get(next) == SUCCESS && next < data + cut) {
      // traceEvents closed inside the window: stop just after its ']'.
      const char* end = next;
      while (end > data && IsJsonSpace(end[-1])) --end;
      return WindowResult{Outcome::kArrayEnded, static_cast<size_t>(end - data)};
    }
    return WindowResult{Outcome::kContinue, cut, /*before_separator=*/true};
  }
}

}  // namespace sightline::kineto
