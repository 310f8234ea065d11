// Reader of the instrument library's per-iteration JSON-lines log (SIGHTLINE_ITERATION_LOG;
// docs/formats/iteration-log.md). `sightline analyze --iteration-log` joins it to a trace's
// iterations (analyses/iteration_log/iteration_log_join.h). Not an importer: a log has no timeline
// of its own.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"

namespace sightline {

inline constexpr int kIterationLogSchemaVersion = 1;

// The well-known per-iteration counters, in log order (keys as in the log).
enum class IterationLogField : int {
  kActiveRequests = 0,
  kContextRequests,
  kGenerationRequests,
  kContextTokens,
  kGeneratedTokens,
  kKvBlocksUsed,
  kKvBlocksFree,
  kKvBlocksMax,
  kKvTokensPerBlock,
  kGpuMemoryBytes,
  kCpuMemoryBytes,
  kPinnedMemoryBytes,
  kCount,
};
inline constexpr int kIterationLogFieldCount = static_cast<int>(IterationLogField::kCount);
std::string_view IterationLogFieldKey(IterationLogField field);

using IterationLogValue = std::variant<int64_t, double, std::string>;

struct IterationLogEntry {
  int64_t line = 0;  // 1-based line in the file
  int64_t iteration = 0;
  int64_t rank = -1, pid = -1;  // -1: not in the line
  int64_t timestamp_ns = -1;    // CLOCK_REALTIME at IterationBegin
  int64_t begin_monotonic_ns = -1, end_monotonic_ns = -1, latency_ns = -1;
  std::optional<bool> profiled;  // inside the profiling window (only when one was configured)
  std::array<std::optional<int64_t>, kIterationLogFieldCount> fields;
  std::vector<std::pair<std::string, IterationLogValue>> user;  // in line order

  const std::optional<int64_t>& field(IterationLogField f) const {
    return fields[static_cast<int>(f)];
  }
};

struct IterationLog {
  std::string path;
  // "sightline" (SIGHTLINE_ITERATION_LOG), or TensorRT-LLM's: "trtllm-iteration-stats",
  // "trtllm-cpp-log", "trtllm-py-executor-log" (analyses/trtllm_iteration_log.h).
  std::string format = "sightline";
  std::vector<IterationLogEntry> entries;  // in file order
  int64_t skipped_lines = 0;               // other lines of a runtime's log (TensorRT-LLM's shapes)
};

// Parses `text` (the file's contents; `path` names it in errors), recognising the shape from the
// content: Sightline's JSON lines or one of TensorRT-LLM's. Errors are InvalidInput with
// "PATH:LINE: what is wrong" and a pointer to the format doc.
StatusOr<IterationLog> ParseIterationLog(std::string_view text, const std::string& path);
StatusOr<IterationLog> ReadIterationLog(const std::string& path);

}  // namespace sightline
