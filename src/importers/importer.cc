#include "importers/importer.h"

#include <fmt/format.h>

#include <cstdint>
#include <functional>

#include "importers/inputs.h"

namespace sightline {
namespace {

bool HasEvents(const Trace& t) {
  return t.kernels.size() + t.memops.size() + t.api_calls.size() + t.ranges.size() + t.gil.size() +
             t.counters.size() + t.memory_events.size() + t.os_calls.size() + t.off_cpu.size() +
             t.py_samples.size() >
         0;
}

// The sum of `values` (each >= 0 after the builder's filters), or -1 past int64.
template <typename Value>
int64_t SumOrPast(size_t n, Value value) {
  unsigned __int128 sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t v = value(i);
    sum += static_cast<unsigned __int128>(v > 0 ? v : 0);
  }
  return sum > static_cast<unsigned __int128>(INT64_MAX) ? -1 : static_cast<int64_t>(sum);
}

// Every sum an analysis takes over one table (a kernel summary's total, a category's, a share)
// is at most the table's whole sum: if that fits in int64, they all do. The builder keeps each
// event within the trace's window, but thousands of events of days each still pass 2^63 ns (292
// years), and saturated totals gave shares adding up to 137%.
Status CheckSumsFit(const Trace& t, const std::string& path) {
  struct Table {
    const char* what;
    size_t n;
    std::function<int64_t(size_t)> value;
    const char* unit;
  };
  const Table tables[] = {
      {"kernels", t.kernels.size(), [&](size_t i) { return t.kernels.dur_ns(i); }, "durations"},
      {"memory operations", t.memops.size(), [&](size_t i) { return t.memops.dur_ns(i); },
       "durations"},
      {"memory operations", t.memops.size(), [&](size_t i) { return t.memops.size_bytes[i]; },
       "sizes"},
      {"API calls", t.api_calls.size(), [&](size_t i) { return t.api_calls.dur_ns(i); },
       "durations"},
      {"ranges", t.ranges.size(), [&](size_t i) { return t.ranges.dur_ns(i); }, "durations"},
      {"GIL intervals", t.gil.size(), [&](size_t i) { return t.gil.dur_ns(i); }, "durations"},
      {"OS calls", t.os_calls.size(), [&](size_t i) { return t.os_calls.dur_ns(i); }, "durations"},
      {"off-CPU intervals", t.off_cpu.size(), [&](size_t i) { return t.off_cpu.dur_ns(i); },
       "durations"},
  };
  for (const Table& table : tables) {
    if (SumOrPast(table.n, table.value) >= 0) continue;
    return InvalidInputError(fmt::format(
        "{}: the {} of its {} {} add up to more than 2^63 ({} ns, 292 years, or bytes): no real "
        "capture does, so its times or sizes are damaged, and every total, share and "
        "utilization of them would be wrong. Check that the file is the tool's own, complete "
        "output (not edited or damaged), or record it again",
        path, table.unit, table.n, table.what, INT64_MAX));
  }
  return Status::Ok();
}

}  // namespace

Status CheckTraceUsable(const Trace& trace, const std::string& path) {
  RETURN_IF_ERROR(CheckSumsFit(trace, path));
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

StatusOr<Trace> ImportTrace(const std::string& path) {
  ASSIGN_OR_RETURN(InputDocument doc, OpenInputOfKind(path, InputKind::kTrace, "this command"));
  return std::move(std::get<Trace>(doc.value));
}

}  // namespace sightline
