#include "whole_program.h"

#include <utility>
#include <variant>
#include <vector>

#include "allreduce/lut_codegen.h"
#include "allreduce/lut_tune.h"
#include "allreduce/sweep_plot.h"
#include "analyses/common/analysis_context.h"
#include "analyses/findings/findings.h"
#include "analyses/floor/step_cost.h"
#include "analyses/iteration_log/iteration_log_summary.h"
#include "analyses/serving/serving_metrics.h"
#include "facts/results_cache.h"
#include "kernel/ncu_report.h"
#include "pipeline/pipeline.h"
#include "reporters/reporter.h"
#include "trt/trt_analysis.h"
#include "trt/trt_report.h"

namespace sightline::fuzz {
namespace {

void Render(const Report& report) {
  (void)RenderTextReport(report);
  (void)RenderJsonReport(report);
  (void)RenderHtmlReport(report);
}

}  // namespace

void RunWholeProgram(InputDocumentValue& document) {
  Report report;
  if (Trace* trace = std::get_if<Trace>(&document)) {
    AnalysisContext context(*trace, AnalyzeOptions{});
    if (!AnalyzeTrace(context, "fuzz", report).ok()) return;
  } else if (RequestResults* results = std::get_if<RequestResults>(&document)) {
    StatusOr<ServingMetrics> m = ComputeServingMetrics(*results, ServingMetricsOptions{});
    if (!m.ok()) return;
    AddServingSection(*results, *m, report);
  } else if (IterationLog* log = std::get_if<IterationLog>(&document)) {
    AddIterationLogSummary(*log, report);
  } else if (TrtEngine* engine = std::get_if<TrtEngine>(&document)) {
    StatusOr<TrtEngineAnalysis> analysis = AnalyzeTrtEngine(*engine);
    if (!analysis.ok()) return;
    const int input = AddTrtEngineReport(*engine, *analysis, TrtReportOptions{}, report);
    ResultsCache results;
    results.Put(TrtEngineResult{engine, &*analysis});
    StatusOr<std::vector<Finding>> findings = ComputeFindings(results);
    if (findings.ok()) AddFindings(std::move(*findings), input, report);
  } else if (NcuExport* ncu = std::get_if<NcuExport>(&document)) {
    std::vector<NcuExport> exports;
    exports.push_back(std::move(*ncu));
    report = BuildNcuReport(GroupNcuExports(std::move(exports)), NcuReportOptions{});
  } else if (NcuSourceExport* source = std::get_if<NcuSourceExport>(&document)) {
    AddNcuSourceSections(report, {*source}, 5);
  } else if (SweepRows* rows = std::get_if<SweepRows>(&document)) {
    StatusOr<TuneResult> tuned = TuneAllReduce(*rows, TuneOptions{});
    if (tuned.ok()) {
      (void)RenderTuneSummary(*tuned);
      (void)GenerateLutHeader(*tuned, {"fuzz.csv"});
    }
    (void)PlotSweep(*rows, {"fuzz.csv"});
    return;
  } else if (ModelConfig* config = std::get_if<ModelConfig>(&document)) {
    // The floor's model of a step on what was read, at small and large work.
    for (double b : {1.0, 4096.0}) {
      StepWork w;
      w.decode_sequences = b;
      w.decode_context = b * 1e6;
      (void)SizesOf(*config);
      (void)CostOf(*config, w);
      w.prefill_sequences = b;
      w.prefill_tokens = b * 1e5;
      (void)CostOf(*config, w);
    }
    return;
  }
  Render(report);
}

}  // namespace sightline::fuzz
