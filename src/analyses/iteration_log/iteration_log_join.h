// Joins an iteration log (importers/iteration_log/iteration_log.h) to one trace: by iteration
// counter when the trace has iteration ranges (the number in "iteration 12", "ProfilerStep#12",
// ...), else by timestamp, and adds the per-iteration log fields to the "iterations" section.
// Rules: docs/formats/iteration-log.md, "Joining a log to a trace".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "facts/iterations.h"
#include "importers/iteration_log/iteration_log.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

class AnalysisContext;  // analyses/common/analysis_context.h

// The first run of digits in an iteration range's name: "iteration 12" -> 12, "ProfilerStep#7" ->
// 7. False when there is none.
bool IterationNumber(std::string_view name, int64_t* out);

enum class IterationLogJoinMethod {
  kIterationCounter,  // the trace's iteration ranges carry the counter in their names
  kRealtime,          // no iteration ranges; the log's timestamp_ns falls in the trace's span
  kMonotonic,         // no iteration ranges; begin/end_monotonic_ns fall in the trace's span
  kNone,              // nothing to join on
};
const char* IterationLogJoinMethodName(IterationLogJoinMethod method);

struct IterationLogRow {
  const IterationLogEntry* entry = nullptr;
  int64_t trace_index = -1;         // Iteration::index in the main set (counter join)
  TimeNs start_ns = 0, end_ns = 0;  // on the trace's clock
  int64_t kernels = -1;             // kernels that start inside [start_ns, end_ns) (timestamp join)
};

struct IterationLogJoin {
  IterationLogJoinMethod method = IterationLogJoinMethod::kNone;
  int64_t log_entries = 0;            // entries of the log considered (of the trace's process)
  int64_t unmatched_trace = 0;        // trace iterations without a log line (counter join)
  std::vector<IterationLogRow> rows;  // matched, in trace (or log) order
  std::string note;                   // why nothing or only part matched; empty when all did
  std::string format;                 // IterationLog::format
  int64_t skipped_lines = 0;          // IterationLog::skipped_lines
  const IterationSet* set = nullptr;  // the trace's iterations (counter join); rows index it
};

// Joins to the context's iterations; without any (or with an invalid regex) the timestamp join
// is tried. The join points into the context's iterations (IterationLogJoin::set): the context must
// outlive it.
IterationLogJoin JoinIterationLog(AnalysisContext& context, const IterationLog& log);

// The run's iteration log (RunInputs::iteration_log) joined to the context's trace: joined once
// per trace, by the first that asks, and kept in the context's ResultsCache (not an analysis
// entry's result, so no entry declares it), for all that read it: the iterations section, the
// floor's steps, the whole-graph estimates' batches and the graph_padding rule. Null when the run
// has no log. Lives as long as the context.
const IterationLogJoin* IterationLogJoinOf(AnalysisContext& context);

// The well-known fields as columns of a report table, in log order.
struct IterationLogFieldColumn {
  IterationLogField field;
  const char* title;  // short column header: "ctx reqs"
  Unit unit;
};
const std::vector<IterationLogFieldColumn>& IterationLogFieldColumns();

// Adds facts and an "iteration_log" table (at most `top_n` rows) to `section`; when the log says
// which iterations ran context (prefill) work, a "prefill_vs_decode" table compares their trace
// wall and GPU time with the decode-only iterations.
void AddIterationLogToSection(const Trace& trace, const IterationLogJoin& join, int64_t top_n,
                              Section& section);

}  // namespace sightline
