// What an iteration log holds on its own, for `sightline analyze LOG` without the trace of the
// run: the log's latencies, throughput and counters, and what the trace would add. With a trace,
// the log joins its iterations instead (analyses/iteration_log/iteration_log_join.h).
#pragma once

#include "importers/iteration_log/iteration_log.h"
#include "report/report.h"

namespace sightline {

// Adds the log as a report input and an "iteration_log" section: facts (lines, iterations,
// latency statistics, generated tokens/s, iterations with context work) and a table of each
// well-known counter's median and maximum over the lines that state it
// (docs/analyses/iterations.md, "An iteration log alone").
void AddIterationLogSummary(const IterationLog& log, Report& report);

}  // namespace sightline
