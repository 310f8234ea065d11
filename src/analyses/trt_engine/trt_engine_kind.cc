#include "analyses/trt_engine/trt_engine_kind.h"

#include <set>

#include "analyses/findings/findings.h"
#include "facts/results_cache.h"
#include "trt/trt_analysis.h"
#include "trt/trt_diff.h"
#include "trt/trt_report.h"

namespace sightline {
namespace {

// One engine per distinct prefix, in the order given, each an input with its sections and the
// findings of the rules on engines. Errors name the file and what to do.
StatusOr<Report> Analyze(const std::vector<RecognisedInput>& inputs,
                         const AnalyzeOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  TrtReportOptions o;
  o.top_n = options.top_n;
  std::set<std::string> seen;
  for (const RecognisedInput& in : inputs) {
    std::string prefix = TrtEnginePrefix(in.path);
    if (prefix.empty()) prefix = in.path;
    if (!seen.insert(prefix).second) continue;  // a sibling of an engine already read
    ASSIGN_OR_RETURN(TrtEngine engine, ReadTrtEngine(in.path));
    ASSIGN_OR_RETURN(TrtEngineAnalysis analysis, AnalyzeTrtEngine(engine));
    const int input = AddTrtEngineReport(engine, analysis, o, report);
    if (!options.findings.enabled) continue;
    ResultsCache results;
    results.Put(TrtEngineResult{&engine, &analysis});
    ASSIGN_OR_RETURN(std::vector<Finding> findings, ComputeFindings(results));
    AddFindings(std::move(findings), input, report);
  }
  return report;
}

StatusOr<Report> Diff(const RecognisedInput& baseline, const RecognisedInput& candidate,
                      const AnalyzeOptions& options) {
  TrtDiffOptions o;
  o.top_n = options.top_n;
  o.min_share_pct = options.diff.min_share_pct;
  o.fail_if_slower_pct = options.diff.fail_if_slower_pct;
  return DiffTrtEngines(baseline.path, candidate.path, o);
}

std::string Use(const InputFile& /*file*/, const FilesView& /*run*/,
                std::map<std::string, std::string>& /*companions*/) {
  return "its own report";
}

}  // namespace

const DocumentKind& TrtEngineKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"TensorRT engine export", "TensorRT engines", {InputKind::kTrtEngine}};
    k.role = DocumentKind::Role::kAlone;
    // TensorRT engine exports (trtexec, Trex) are not timelines: they have their own report.
    k.analyze = &Analyze;
    k.alone_phrase = "a TensorRT engine's exports";
    k.diff = &Diff;
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
