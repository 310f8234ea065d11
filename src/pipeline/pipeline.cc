#include "pipeline/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "analyses/findings/findings.h"
#include "importers/importer.h"

namespace sightline {

Status AnalyzeTrace(const Trace& trace, const std::string& label, const AnalyzeOptions& options,
                    Report& report) {
  const int input = static_cast<int>(report.inputs.size());
  ReportInput& in = report.inputs.emplace_back();
  in.label = label;
  in.path = trace.source.path;
  in.format = trace.source.format;
  in.format_version = trace.source.format_version;
  in.producer = trace.source.producer;
  in.rank = trace.source.rank;
  in.diagnostics = trace.diagnostics;
  for (const AnalysisEntry& a : Analyses()) {
    Status s = a.run(trace, input, options, report);
    if (!s.ok()) return s.WithPrefix(fmt::format("{}: analysis {}", trace.source.path, a.name));
  }
  StatusOr<std::vector<Finding>> findings = ComputeFindings(trace, options);
  if (!findings.ok()) {
    return findings.status().WithPrefix(fmt::format("{}: findings", trace.source.path));
  }
  for (Finding& f : *findings) {
    f.input = input;
    report.findings.push_back(std::move(f));
  }
  // Ranked over all inputs; equal savings keep input then rule order.
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Finding& a, const Finding& b) {
                     return a.estimated_savings_ns > b.estimated_savings_ns;
                   });
  return Status::Ok();
}

StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths,
                              const AnalyzeOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(Trace trace, ImportTrace(path));
    if (trace.source.path.empty()) trace.source.path = path;
    std::string label = std::filesystem::path(path).filename().string();
    if (trace.source.rank >= 0) label += fmt::format(" (rank {})", trace.source.rank);
    RETURN_IF_ERROR(AnalyzeTrace(trace, label, options, report));
  }
  return report;
}

}  // namespace sightline
