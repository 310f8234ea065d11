// The iteration logs' readers for the front door (importers/inputs.h): Sightline's own log and
// TensorRT-LLM's iteration statistics, each with its sniffer and its place in the sniffing order.
// Both read with ReadIterationLog (iteration_log.h).
#pragma once

#include <string_view>

#include "base/input_sniff.h"

namespace sightline {

// Sightline's own log: the first line is a JSON object with schema_version and iteration (and no
// request: that is the request log).
bool SniffSightlineIterationLog(std::string_view head);
// TensorRT-LLM's iteration statistics in any of their shapes: the reader itself decides, over
// the complete lines of the head.
bool SniffTrtllmIterationLog(std::string_view head);

// After the request log (kRequestLogReader), whose lines carry schema_version too.
inline constexpr ReaderSpec kSightlineIterationLogReader = {
    "sightline-iteration-log", "Sightline iteration log (SIGHTLINE_ITERATION_LOG, JSON lines)", 800,
    &SniffSightlineIterationLog};
// Logs: whatever is left, if TensorRT-LLM's statistics are in it. Last of all: its sniffer parses.
inline constexpr ReaderSpec kTrtllmIterationLogReader = {
    "trtllm-iteration-stats",
    "TensorRT-LLM iteration statistics (IterationStats JSON, py_executor or C++ runtime log)", 1500,
    &SniffTrtllmIterationLog};

}  // namespace sightline
