// The analysis registry. Each analysis has a typed entry point that tests call directly
// (ComputeX(const Trace&, const XOptions&) -> StatusOr<XResult>, in its own header) and a registry
// entry that turns its result into a report section. Analyses never render.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time_units.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

struct IterationLog;  // analyses/iteration_log.h

// Options the CLI passes to every analysis; each analysis reads the fields it needs.
struct AnalyzeOptions {
  std::string iterations_regex;   // empty: the default iteration names (docs/metrics.md)
  DurationNs min_gap_ns = 2'000;  // idle gaps shorter than this are launch jitter
  int top_n = 15;                 // rows kept in long tables (the CLI picks it per format)
  bool findings = true;           // run the findings rules (--no-findings leaves them out)
  // --iteration-log: joined to each trace's iterations (analyses/iteration_log_join.h); may be
  // null.
  std::shared_ptr<const IterationLog> iteration_log;
};

struct AnalysisEntry {
  const char* name;     // "kernel_summary"; also the section key
  const char* summary;  // one line for `sightline analyze --list`
  // Appends this analysis's section(s) for trace `input` to the report.
  Status (*run)(const Trace& trace, int input, const AnalyzeOptions& options, Report& report);
};

// All analyses, in report order.
const std::vector<AnalysisEntry>& Analyses();

}  // namespace sightline
