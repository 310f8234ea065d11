// Recognising a Kineto trace from its first bytes: a JSON object, plain or gzip'd (the gzip'd
// prefix is inflated as far as the bytes at hand allow). A leading UTF-8 BOM is tolerated.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/input_sniff.h"

namespace sightline::kineto {

// True when the bytes (after an optional UTF-8 BOM and whitespace) start a JSON object.
bool LooksLikeJsonObject(std::string_view bytes);

// True when the bytes start a JSON object whose first field's value runs past their end: a large
// or deeply nested first field (real traces put metadata before traceEvents), so that the keys
// naming the format come after the head. Scans without recursion, at any depth.
bool FirstFieldRunsPastHead(std::string_view head);

// Inflates as much of a gzip prefix as the bytes allow (at most out_size bytes) and returns how
// many leading output bytes are known good.
size_t InflateGzipPrefix(std::string_view gz, char* out, size_t out_size);

}  // namespace sightline::kineto

namespace sightline {

// A Chrome-trace JSON object as Kineto writes it: one of its top-level keys near the start; or
// Chrome's JSON Array Format (the events alone), whose first event has a phase ("ph").
bool SniffKineto(std::string_view head);

// The most general of the JSON formats (any object with one of its keys near the start, or a
// first field too large for the head): after every other JSON format, before the logs.
inline constexpr ReaderSpec kKinetoReader = {
    "kineto-json", "PyTorch profiler (Kineto) Chrome-trace JSON (object or bare event array)", 1400,
    &SniffKineto};

}  // namespace sightline
