// The report of one TensorRT engine (`sightline analyze E.graph.json`, or any of its siblings):
// sections trt_engine (device, build, layers by type and precision), trt_layers (per layer and
// fused layers), trt_reformats and trt_latency (as trtexec states it, checked against trtexec's own
// figures); the findings trt_host_bound, trt_data_transfers and trt_reformats are rules of the
// findings engine (docs/analyses/trt_engine.md). Times in the report are ns.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "importers/trt_engine/trt_engine.h"
#include "report/report.h"
#include "trt/trt_analysis.h"

namespace sightline {

struct TrtReportOptions {
  int top_n = 15;  // rows of the per-layer and fused tables
};

// Adds the engine as a report input and its sections; returns the input's index. Its findings come
// from the rules on engines (analyses/findings/rule_trt_*.cc), which the pipeline runs beside.
int AddTrtEngineReport(const TrtEngine& engine, const TrtEngineAnalysis& analysis,
                       const TrtReportOptions& options, Report& report);

}  // namespace sightline
