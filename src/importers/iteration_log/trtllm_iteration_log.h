// TensorRT-LLM's per-iteration statistics, in the three shapes it writes them, read into the same
// IterationLog as Sightline's own log so `analyze --iteration-log` joins any of them to a trace's
// iterations by counter (analyses/iteration_log/iteration_log_join.h).
// docs/formats/trtllm-iteration-stats.md.
//   - IterationStats JSON: one object per line, or the JSON array trtllm-serve's /metrics returns
//     ({"iter": 154, "iterLatencyMS": 7.0, "numActiveRequests": 1, "inflightBatchingStats": {...},
//     "kvCacheStats": {...}, "gpuMemUsage": ...});
//   - the PyTorch executor's log lines ("iter = 154, ... host_step_time = 7.4ms,
//     prev_device_step_time = 7.0ms, ... states = {'num_ctx_requests': 0, ...}");
//   - the C++ runtime's --log_iteration_data lines ("[TensorRT-LLM][INFO] {"Active Request
//     Count":249, ..., "Iteration Counter":90, ...}").
// In the two log shapes, other lines are skipped and counted.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "importers/iteration_log/iteration_log.h"

namespace sightline {

// The log when `text` is one of the shapes above (an error when it is one but malformed, e.g. a
// JSON array of non-objects); nullopt when it is none of them.
std::optional<StatusOr<IterationLog>> ParseTrtllmIterationLog(std::string_view text,
                                                              const std::string& path);

}  // namespace sightline
