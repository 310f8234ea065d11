#include "importers/iteration_log/iteration_log_readers.h"

#include <optional>

#include "importers/iteration_log/trtllm_iteration_log.h"

namespace sightline {

bool SniffSightlineIterationLog(std::string_view head) {
  const std::string_view body = SkipBomAndSpace(head);
  const std::string_view line = body.substr(0, body.find('\n'));
  return line.starts_with("{") && line.find("\"schema_version\"") != std::string_view::npos &&
         line.find("\"iteration\"") != std::string_view::npos &&
         line.find("\"request\"") == std::string_view::npos;
}

bool SniffTrtllmIterationLog(std::string_view head) {
  const std::string_view body = SkipBomAndSpace(head);
  if (body.starts_with("[") && body.find("\"iterLatencyMS\"") != std::string_view::npos)
    return true;
  const size_t last_newline = head.rfind('\n');
  const std::string_view lines =
      last_newline == std::string_view::npos ? head : head.substr(0, last_newline);
  std::optional<StatusOr<IterationLog>> log = ParseTrtllmIterationLog(lines, "");
  return log.has_value() && log->ok() && !(*log)->entries.empty();
}

}  // namespace sightline
