// The report of one TensorRT engine (`sightline analyze E.graph.json`, or any of its siblings):
// sections trt_engine (device, build, layers by type and precision), trt_layers (per layer and
// fused layers), trt_reformats and trt_latency (as trtexec states it, checked against trtexec's own
// figures), and the findings trt_host_bound, trt_data_transfers and trt_reformats
// (docs/analyses/trt_engine.md). Times in the report are ns.
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
  bool findings = true;
  // Reformat layers above this share of the layer time make a finding.
  double reformat_finding_pct = 5.0;
};

// Adds the engine as a report input and its sections and findings.
void AddTrtEngineReport(const TrtEngine& engine, const TrtEngineAnalysis& analysis,
                        const TrtReportOptions& options, Report& report);

// `sightline analyze FILE...` where every file is a TensorRT export: one engine per distinct
// prefix, in the order given. Errors name the file and what to do.
StatusOr<Report> AnalyzeTrtFiles(const std::vector<std::string>& paths,
                                 const TrtReportOptions& options);

}  // namespace sightline
