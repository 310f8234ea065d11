#include "importers/importer.h"

#include <fmt/format.h>

#include "importers/inputs.h"

namespace sightline {
namespace {

bool HasEvents(const Trace& t) {
  return t.kernels.size() + t.memops.size() + t.api_calls.size() + t.ranges.size() + t.gil.size() +
             t.counters.size() + t.memory_events.size() + t.os_calls.size() + t.off_cpu.size() +
             t.py_samples.size() >
         0;
}

}  // namespace

Status CheckTraceUsable(const Trace& trace, const std::string& path) {
  if (HasEvents(trace)) return Status::Ok();
  bool dropped = false;
  std::string what;
  for (const Diagnostic& d : trace.diagnostics.items()) {
    dropped |= d.severity() == DiagnosticSeverity::kWarning;
    what += fmt::format("\n  - {} {}: {}", d.count, d.code(), d.text());
  }
  if (!dropped) return Status::Ok();
  return InvalidInputError(fmt::format(
      "{}: nothing usable is left in this trace: every event was dropped. What was dropped "
      "(docs/diagnostics.md explains each code):{}\nCheck that the file is the tool's own, "
      "complete output (not edited or damaged), or record it again",
      path, what));
}

StatusOr<Trace> ImportTrace(const std::string& path, const ImportOptions&) {
  ASSIGN_OR_RETURN(InputDocument doc, OpenInputOfKind(path, InputKind::kTrace, "this command"));
  return std::move(std::get<Trace>(doc.value));
}

}  // namespace sightline
