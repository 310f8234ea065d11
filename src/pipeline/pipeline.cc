#include "pipeline/pipeline.h"

#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <filesystem>

#include "analyses/findings/findings.h"
#include "analyses/ranks.h"
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
  if (!options.findings) return Status::Ok();
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

StatusOr<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file(ec) || name.empty() || name[0] == '.') continue;
        auto ends = [&](std::string_view suffix) {
          return name.size() >= suffix.size() &&
                 name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
        };
        if (ends(".json") || ends(".json.gz") || ends(".sqlite")) {
          files.push_back(e.path().string());
        }
      }
      if (ec) return InvalidArgumentError(fmt::format("{}: cannot list: {}", path, ec.message()));
      if (files.empty()) {
        return InvalidArgumentError(
            fmt::format("{}: directory holds no trace files (*.json, *.json.gz, *.sqlite)", path));
      }
      std::sort(files.begin(), files.end());
      out.insert(out.end(), files.begin(), files.end());
    } else if (!fs::exists(path, ec) && path.find_first_of("*?[") != std::string::npos) {
      // A pattern the shell did not expand (quoted, or from a script).
      glob_t g{};
      const int rc = glob(path.c_str(), 0, nullptr, &g);
      std::vector<std::string> files;
      if (rc == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
      }
      globfree(&g);
      if (files.empty()) {
        return InvalidArgumentError(fmt::format("{}: no file matches this pattern", path));
      }
      out.insert(out.end(), files.begin(), files.end());  // glob sorts them
    } else {
      out.push_back(path);
    }
  }
  return out;
}

StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths,
                              const AnalyzeOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandTracePaths(paths));
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  // Per input, what the ranks analysis needs; the traces themselves are dropped one by one.
  std::vector<RankProfile> profiles;
  std::vector<std::string> names;
  for (const std::string& path : files) {
    ASSIGN_OR_RETURN(Trace trace, ImportTrace(path));
    if (trace.source.path.empty()) trace.source.path = path;
    std::string label = std::filesystem::path(path).filename().string();
    if (trace.source.rank >= 0) label += fmt::format(" (rank {})", trace.source.rank);
    const int input = static_cast<int>(report.inputs.size());
    RETURN_IF_ERROR(AnalyzeTrace(trace, label, options, report));
    StatusOr<RankProfile> profile = ComputeRankProfile(trace, label, input);
    if (!profile.ok()) return profile.status().WithPrefix(fmt::format("{}: ranks", path));
    profiles.push_back(std::move(profile).value());
    names.push_back(path);
  }
  // Several inputs are the ranks of one job; one input gets the per-rank view when it says it is
  // one rank of several.
  if (files.size() >= 2 || (profiles.size() == 1 && profiles[0].world_size > 1)) {
    StatusOr<RanksResult> ranks = ComputeRanks(profiles, names);
    if (!ranks.ok()) return ranks.status().WithPrefix("ranks");
    AddRanksSection(*ranks, report);
    // Ranks side by side come first, before the per-input sections.
    std::rotate(report.sections.begin(), report.sections.end() - 1, report.sections.end());
    std::vector<Finding> findings;
    if (options.findings) {
      RETURN_IF_ERROR(RuleStraggler(*ranks, findings).WithPrefix("finding rule straggler"));
    }
    for (Finding& f : findings) report.findings.push_back(std::move(f));
    std::stable_sort(report.findings.begin(), report.findings.end(),
                     [](const Finding& a, const Finding& b) {
                       return a.estimated_savings_ns > b.estimated_savings_ns;
                     });
  }
  return report;
}

}  // namespace sightline
