#include "analyses/serving/serving_kind.h"

#include <fmt/format.h>

#include <memory>

#include "analyses/serving/serving_diff.h"
#include "analyses/serving/serving_metrics.h"
#include "base/file_io.h"

namespace sightline {
namespace {

Status CheckAbsent(const AnalyzeOptions& options) {
  if (!options.serving.slo.any()) return Status::Ok();
  return InvalidArgumentError(
      "--slo needs serving results (a benchmark's results file among the inputs, or "
      "--requests): the SLOs are checked per request");
}

Status Join(const RecognisedInput& input, RunInputs& inputs) {
  ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(input));
  inputs.requests =
      std::make_shared<const RequestResults>(std::move(std::get<RequestResults>(d.value)));
  return Status::Ok();
}

void AddInput(const std::string& label, const std::string& path, const RequestResults& r,
              Report& report) {
  ReportInput& in = report.inputs.emplace_back();
  in.label = label;
  in.path = path;
  in.format = r.format;
  in.producer = r.producer;
}

StatusOr<Report> Diff(const RecognisedInput& baseline, const RecognisedInput& candidate,
                      const AnalyzeOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  ServingMetricsOptions o;
  o.slo = options.serving.slo;
  ServingMetrics metrics[2];
  int side = 0;
  for (const RecognisedInput* input : {&baseline, &candidate}) {
    ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(*input));
    const RequestResults& r = std::get<RequestResults>(d.value);
    ASSIGN_OR_RETURN(metrics[side], ComputeServingMetrics(r, o));
    AddInput(side == 0 ? "baseline" : "candidate", input->path, r, report);
    ++side;
  }
  AddServingDiff(metrics[0], metrics[1], options.diff.fail_if_slower_pct, report);
  return report;
}

// Several serving results per side: each run's metrics and the runs pooled (AddServingDiffRuns).
StatusOr<Report> DiffRuns(const std::vector<RecognisedInput>& baseline,
                          const std::vector<RecognisedInput>& candidate,
                          const AnalyzeOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  ServingMetricsOptions o;
  o.slo = options.serving.slo;
  ServingMetrics pooled[2];
  std::vector<ServingMetrics> runs[2];
  int side = 0;
  for (const std::vector<RecognisedInput>* inputs : {&baseline, &candidate}) {
    std::vector<RequestResults> results;
    for (size_t i = 0; i < inputs->size(); ++i) {
      const RecognisedInput& input = (*inputs)[i];
      ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(input));
      RequestResults& r = std::get<RequestResults>(d.value);
      ASSIGN_OR_RETURN(ServingMetrics m, ComputeServingMetrics(r, o));
      runs[side].push_back(std::move(m));
      const char* name = side == 0 ? "baseline" : "candidate";
      AddInput(inputs->size() == 1 ? std::string(name) : fmt::format("{} run {}", name, i + 1),
               input.path, r, report);
      results.push_back(std::move(r));
    }
    ASSIGN_OR_RETURN(pooled[side], ComputeServingMetrics(PoolServingRuns(std::move(results)), o));
    ++side;
  }
  AddServingDiffRuns(pooled[0], runs[0], pooled[1], runs[1], options.diff.fail_if_slower_pct,
                     report);
  return report;
}

std::string Use(const InputFile& file, const FilesView& run,
                std::map<std::string, std::string>& /*companions*/) {
  // Only a request log says in which iteration each token came out (serving_trace_join.h).
  return run.first_member.empty() || file.reader != "request-log"
             ? "serving metrics"
             : fmt::format("serving metrics; its token gaps joined to {}'s iterations",
                           FileNameOf(run.first_member));
}

}  // namespace

const DocumentKind& ServingResultsKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"serving results", "serving results", {InputKind::kServingResults}};
    k.role = DocumentKind::Role::kJoins;
    k.option = "--requests";
    k.one_only = "one run analyses one benchmark's results (`sightline diff A B` compares two)";
    k.leads = true;  // alone: the serving report (the serving analysis over no trace)
    k.check_absent = &CheckAbsent;
    k.join = &Join;
    k.diff = &Diff;
    k.diff_runs = &DiffRuns;
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
