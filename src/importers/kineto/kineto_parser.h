// Walks a Kineto trace document from a JsonStream: the top-level object's fields in any order
// (small ones parsed with simdjson one at a time, traceEvents through the EventsReader), mapped
// into a TraceBuilder. No DOM of the file and no whole-file index are ever built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "importers/kineto/kineto_stream.h"
#include "model/trace_builder.h"

namespace sightline::kineto {

struct ParseOutcome {
  // The events were mapped with a base time that the file turned out not to have (the base came
  // after traceEvents and differed from the guess): parse again with `base_time_ns`.
  bool retry = false;
  int64_t base_time_ns = 0;
};

// `base_guess_ns` is used for the events when baseTimeNanoseconds comes after traceEvents.
// Errors (malformed JSON, no traceEvents) name `path` and say what to do; events that cannot be
// used are counted, not errors.
// `window_bytes` is how much of traceEvents is parsed at a time (see kineto_events_reader.h).
Status ParseKinetoStream(JsonStream& stream, const std::string& path, int64_t base_guess_ns,
                         size_t window_bytes, TraceBuilder* builder, ParseOutcome* outcome);

// ImportKinetoJson with a chosen window size (tests use tiny windows to exercise the window
// boundaries).
StatusOr<Trace> ImportKinetoJsonWithWindow(const std::string& path, size_t window_bytes);

// baseTimeNanoseconds as found near the end of the file (older Kineto versions write it after
// traceEvents), or nullopt. A guess: ParseKinetoStream verifies it.
std::optional<int64_t> FindBaseTimeGuess(std::string_view tail);

}  // namespace sightline::kineto
