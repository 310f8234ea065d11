// Importer for PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip'd; the mapping and what
// is dropped are in docs/formats/kineto.md. The pieces, in data-flow order: kineto_stream (bytes,
// gzip) -> kineto_parser (top-level fields) -> kineto_events_reader (traceEvents a window at a
// time) -> kineto_read_event (one event) -> kineto_mapper (TraceBuilder rows, counted drops).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "model/trace.h"

namespace sightline {

bool SniffKinetoJson(std::string_view first_bytes);
StatusOr<Trace> ImportKinetoJson(const std::string& path);

}  // namespace sightline
