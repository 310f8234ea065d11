// Reads the elements of traceEvents from a JsonStream a window at a time (a few MiB), so the
// parser's index stays small and is reused: each window runs from the start of an element to
// just after the last '}' in it, is wrapped in brackets in place ('[' on the byte before, ']' on
// the byte after, both restored) and parsed with simdjson On-Demand. An element cut by the
// window's end cannot parse (the added ']' never closes an object), so the next window starts
// at it; a cut inside a string fails simdjson's stage 1 and an earlier '}' is tried; an element
// bigger than the window doubles the window. Malformed JSON is an error once the window reaches
// the end of the file.
#pragma once

#include <string>

#include "base/status.h"
#include "importers/kineto/kineto_event.h"
#include "importers/kineto/kineto_json.h"
#include "importers/kineto/kineto_mapper.h"
#include "importers/kineto/kineto_stream.h"

namespace sightline::kineto {

class EventsReader {
 public:
  static constexpr size_t kDefaultWindowBytes = size_t{4} << 20;

  EventsReader(const std::string& path, size_t window_bytes)
      : path_(path), window_bytes_(window_bytes) {}

  // The stream is just after traceEvents' '['; on success it is just after the closing ']'.
  Status Read(JsonStream& stream, EventMapper& mapper);

 private:
  enum class Outcome { kContinue, kArrayEnded, kGrow };
  struct WindowResult {
    Outcome outcome = Outcome::kContinue;
    size_t consumed = 0;            // bytes of the stream done with
    bool before_separator = false;  // the next element's ',' is still ahead
  };
  StatusOr<WindowResult> ParseWindow(JsonStream& stream, size_t limit, bool final,
                                     EventMapper& mapper);
  Status JsonError(const JsonStream& stream, const char* data, const char* at, const char* what);

  const std::string& path_;
  size_t window_bytes_;
  sj::parser parser_;
  Event event_;
};

}  // namespace sightline::kineto
