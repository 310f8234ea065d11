#include "analyses/ncu/ncu_kind.h"

#include "kernel/ncu_report.h"

namespace sightline {
namespace {

// The details and raw pages grouped by kernel, then the source pages' sections.
StatusOr<Report> Analyze(const std::vector<RecognisedInput>& inputs,
                         const AnalyzeOptions& options) {
  std::vector<NcuExport> exports;
  std::vector<NcuSourceExport> sources;
  for (const RecognisedInput& in : inputs) {
    if (in.reader->kind != InputKind::kNcuExport) continue;
    ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(in));
    exports.push_back(std::move(std::get<NcuExport>(d.value)));
  }
  for (const RecognisedInput& in : inputs) {
    if (in.reader->kind != InputKind::kNcuSource) continue;
    ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(in));
    sources.push_back(std::move(std::get<NcuSourceExport>(d.value)));
  }
  NcuReportOptions o;
  o.top = options.top_n;
  Report report = BuildNcuReport(GroupNcuExports(std::move(exports)), o);
  AddNcuSourceSections(report, sources, options.top_n);
  return report;
}

std::string Use(const InputFile& /*file*/, const FilesView& /*run*/,
                std::map<std::string, std::string>& /*companions*/) {
  return "its own report";
}

}  // namespace

const DocumentKind& NcuExportKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"Nsight Compute export",
                   "Nsight Compute exports",
                   {InputKind::kNcuExport, InputKind::kNcuSource}};
    k.role = DocumentKind::Role::kAlone;
    k.analyze = &Analyze;
    k.alone_phrase = "Nsight Compute exports";
    k.diff_note = " (`sightline ncu A.csv B.csv` puts Nsight Compute exports side by side)";
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
