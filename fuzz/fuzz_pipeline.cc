// The whole program on one input, as `sightline analyze FILE` runs it: the front door
// (importers/inputs.h: recognised by content, decompressed, read by whichever reader of the
// registry takes it), then every registered analysis and the findings on a trace, the serving
// metrics on benchmark results, the report of an Nsight Compute export, and the text, JSON and
// HTML reporters on the report. A reader added to the registry is fuzzed here with no list to edit.
// Seeds: every other target's seeds (fuzz/gather_seeds.sh).
#include <variant>

#include "analyses/analysis_context.h"
#include "fuzz_support.h"
#include "importers/inputs.h"
#include "kernel/ncu_report.h"
#include "pipeline/pipeline.h"
#include "reporters/reporter.h"
#include "serving/serving_metrics.h"

namespace {

void Render(const sightline::Report& report) {
  (void)sightline::RenderTextReport(report);
  (void)sightline::RenderJsonReport(report);
  (void)sightline::RenderHtmlReport(report);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sightline;
  fuzz::ChooseNsysThreads(data, size);
  const std::string path = fuzz::WriteInputFile(fuzz::AsView(data, size), ".input");
  StatusOr<InputDocument> doc = OpenInput(path);
  if (!doc.ok()) return 0;
  if (Trace* trace = std::get_if<Trace>(&doc->value)) {
    AnalysisContext context(*trace, AnalyzeOptions{});
    Report report;
    if (AnalyzeTrace(context, "fuzz", report).ok()) Render(report);
  } else if (RequestResults* results = std::get_if<RequestResults>(&doc->value)) {
    StatusOr<ServingMetrics> m = ComputeServingMetrics(*results, ServingMetricsOptions{});
    if (m.ok()) {
      Report report;
      AddServingSection(*results, *m, report);
      Render(report);
    }
  } else if (NcuExport* ncu = std::get_if<NcuExport>(&doc->value)) {
    std::vector<NcuExport> exports;
    exports.push_back(std::move(*ncu));
    Render(BuildNcuReport(GroupNcuExports(std::move(exports)), NcuReportOptions{}));
  }
  return 0;
}
