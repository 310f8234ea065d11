#include "pipeline/trace_sets.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "analyses/findings/findings.h"
#include "facts/results_cache.h"
#include "importers/importer.h"

namespace sightline {

StatusOr<std::shared_ptr<AnalysisContext>> ImportContext(const std::string& path,
                                                         const AnalyzeOptions& options,
                                                         const RunInputs& inputs) {
  ASSIGN_OR_RETURN(Trace trace, ImportTrace(path));
  if (trace.source.path.empty()) trace.source.path = path;
  return std::make_shared<AnalysisContext>(std::make_unique<const Trace>(std::move(trace)), options,
                                           inputs);
}

std::string MemberLabel(const std::string& path, const Trace& trace) {
  std::string label = std::filesystem::path(path).filename().string();
  if (trace.source.rank >= 0) label += fmt::format(" (rank {})", trace.source.rank);
  return label;
}

std::vector<MultiTraceRun> CreateMultiTraceAnalyses(TraceSetKind kind,
                                                    const AnalyzeOptions& options,
                                                    const RunInputs& inputs) {
  std::vector<MultiTraceRun> multi;
  for (const MultiTraceAnalysisEntry& e : MultiTraceAnalyses()) {
    if (e.kind == kind) multi.push_back({&e, e.create(options, inputs)});
  }
  return multi;
}

Status AddToMultiTrace(std::vector<MultiTraceRun>& multi,
                       const std::shared_ptr<AnalysisContext>& context,
                       const TraceSetMember& member) {
  for (MultiTraceRun& m : multi) {
    Status s = m.analysis->Add(context, member);
    if (!s.ok()) return s.WithPrefix(fmt::format("{}: {}", member.path, m.entry->name));
  }
  return Status::Ok();
}

Status FinishTraceSet(const TraceSet& set, std::vector<MultiTraceRun>& multi,
                      const AnalyzeOptions& options, Report& report) {
  const size_t per_input_sections = report.sections.size();
  ResultsCache results;
  for (MultiTraceRun& m : multi) {
    RETURN_IF_ERROR(m.analysis->Finish(set, report, results).WithPrefix(m.entry->name));
  }
  std::rotate(report.sections.begin(),
              report.sections.begin() + static_cast<std::ptrdiff_t>(per_input_sections),
              report.sections.end());
  if (options.findings.enabled) {
    ASSIGN_OR_RETURN(std::vector<Finding> findings, ComputeFindings(results));
    AddFindings(std::move(findings), -1, report);
  }
  SortFindings(report.findings);
  return Status::Ok();
}

StatusOr<Report> RunTraceSet(TraceSet set, const std::vector<std::string>& files,
                             const AnalyzeOptions& options, const RunInputs& inputs) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  std::vector<MultiTraceRun> multi = CreateMultiTraceAnalyses(set.kind, options, inputs);
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    ASSIGN_OR_RETURN(std::shared_ptr<AnalysisContext> context,
                     ImportContext(path, options, inputs));
    TraceSetMember& member = set.members[i];
    member.path = path;
    member.index = static_cast<int>(i);
    if (set.kind == TraceSetKind::kRanks) {
      member.label = MemberLabel(path, context->trace());
      member.input = static_cast<int>(report.inputs.size());
      RETURN_IF_ERROR(AnalyzeTrace(*context, member.label, report));
    } else {
      member.input = AddReportInput(*context, member.label, report);
    }
    RETURN_IF_ERROR(AddToMultiTrace(multi, context, member));
  }
  RETURN_IF_ERROR(FinishTraceSet(set, multi, options, report));
  return report;
}

}  // namespace sightline
