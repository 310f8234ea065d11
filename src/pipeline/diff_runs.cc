// `sightline diff` over the pipeline: two files (two traces, or two of another kind whose entry
// has a diff: analyses/common/document_kind.h), several runs per side (their step samples pooled
// for the verdict, or a kind's own diff of runs), a saved baseline against new runs, and the
// baseline file itself (CollectBaseline). pipeline.h says what each entry point takes.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "analyses/common/analysis_context.h"
#include "analyses/common/document_kind.h"
#include "base/file_io.h"
#include "diff/baseline_file.h"
#include "diff/loop_verdicts.h"
#include "diff/step_samples.h"
#include "diff/verdict.h"
#include "diff/verdict_report.h"
#include "importers/inputs.h"
#include "pipeline/pipeline.h"
#include "pipeline/trace_sets.h"

namespace sightline {

namespace {

// "two traces, two serving results or two TensorRT engines": the kinds `diff` compares.
std::string DiffableKinds() {
  std::vector<std::string> kinds;
  for (const DocumentKind* kind : DocumentKinds()) {
    if (kind->named_only) continue;
    if (kind->diff != nullptr || kind->role == DocumentKind::Role::kMember) {
      kinds.push_back(fmt::format("two {}", kind->plural));
    }
  }
  return ListOfKinds(kinds, "or");
}

bool IsMember(InputKind kind) {
  const DocumentKind* k = DocumentKindOf(kind);
  return k != nullptr && k->role == DocumentKind::Role::kMember;
}

}  // namespace

StatusOr<Report> DiffFiles(const std::string& baseline, const std::string& candidate,
                           const AnalyzeOptions& options) {
  // Both sides are recognised first: two of a kind compare as their kind's diff says (serving
  // metrics, TensorRT engines per layer), two traces through the diff analyses.
  ASSIGN_OR_RETURN(RecognisedInput b, RecogniseInput(baseline));
  ASSIGN_OR_RETURN(RecognisedInput a, RecogniseInput(candidate));
  const InputKind kind = b.reader->kind;
  if (a.reader->kind != kind) {
    return InvalidArgumentError(fmt::format(
        "{} is of the kind '{}' but {} of the kind '{}': diff compares two of a kind "
        "({})",
        baseline, InputKindName(kind), candidate, InputKindName(a.reader->kind), DiffableKinds()));
  }
  const DocumentKind* k = DocumentKindOf(kind);
  if (k != nullptr && k->diff != nullptr) return k->diff(b, a, options);
  if (k == nullptr || k->role != DocumentKind::Role::kMember) {
    return InvalidArgumentError(fmt::format("{} and {} are {}s; diff compares {}{}", baseline,
                                            candidate, InputKindName(kind), DiffableKinds(),
                                            k != nullptr ? k->diff_note : ""));
  }
  TraceSet set;
  set.kind = TraceSetKind::kDiff;
  set.members.resize(2);
  set.members[0].label = "baseline";
  set.members[1].label = "candidate";
  return RunTraceSet(std::move(set), {baseline, candidate}, options);
}

namespace {

// The traces of one side: directories expanded (their trace files, by name), every input a trace.
StatusOr<std::vector<std::string>> TracesOfSide(const ExpandedInputs& in,
                                                const std::vector<std::string>& paths,
                                                const char* side) {
  std::vector<std::string> out;
  for (const RecognisedInput& r : in.inputs) {
    if (!IsMember(r.reader->kind)) {
      return InvalidArgumentError(
          fmt::format("{} is {} ({}); with several runs per side every {} run must be a trace",
                      r.path, InputKindName(r.reader->kind), r.reader->name, side));
    }
    out.push_back(r.path);
  }
  if (out.empty()) {
    return InvalidArgumentError(fmt::format(
        "no trace among the {} inputs ({}); give trace files or directories holding them", side,
        fmt::join(paths, ", ")));
  }
  return out;
}

StatusOr<std::vector<std::string>> TracesOfSide(const std::vector<std::string>& paths,
                                                const char* side) {
  ASSIGN_OR_RETURN(ExpandedInputs in, ExpandInputs(paths));
  return TracesOfSide(in, paths, side);
}

bool AnyDirectory(const std::vector<std::string>& paths) {
  std::error_code ec;
  for (const std::string& p : paths) {
    if (std::filesystem::is_directory(p, ec)) return true;
  }
  return false;
}

std::string RunLabel(const char* side, size_t i, size_t n) {
  return n == 1 ? std::string(side) : fmt::format("{} run {}", side, i + 1);
}

}  // namespace

namespace {

bool IsSavedBaseline(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // pipes: the door refuses them
  StatusOr<std::string> head = ReadFilePrefix(path, 256);
  return head.ok() && LooksLikeBaseline(*head);
}

bool AnySavedBaseline(const std::vector<std::string>& paths) {
  return std::any_of(paths.begin(), paths.end(), IsSavedBaseline);
}

}  // namespace

StatusOr<Report> DiffRuns(const std::vector<std::string>& baseline,
                          const std::vector<std::string>& candidate,
                          const AnalyzeOptions& options) {
  // Saved baselines among the inputs: the verdict alone, over their runs and the traces' runs.
  if (AnySavedBaseline(baseline) || AnySavedBaseline(candidate)) {
    return DiffSamples(baseline, candidate, options);
  }
  if (baseline.empty() || candidate.empty()) {
    return InvalidArgumentError(
        "diff needs a baseline and a candidate: `sightline diff BASELINE CANDIDATE`, or several "
        "runs per side: `sightline diff A1 A2 -- B1 B2`");
  }
  if (baseline.size() == 1 && candidate.size() == 1 && !AnyDirectory(baseline) &&
      !AnyDirectory(candidate)) {
    return DiffFiles(baseline[0], candidate[0], options);
  }
  // Every input on both sides of one kind that compares runs (serving results): its diff.
  ASSIGN_OR_RETURN(ExpandedInputs eb, ExpandInputs(baseline));
  ASSIGN_OR_RETURN(ExpandedInputs ea, ExpandInputs(candidate));
  if (!eb.inputs.empty() && !ea.inputs.empty()) {
    const DocumentKind* k = DocumentKindOf(eb.inputs.front().reader->kind);
    auto all_of_kind = [&](const ExpandedInputs& e) {
      return std::all_of(e.inputs.begin(), e.inputs.end(), [&](const RecognisedInput& r) {
        return DocumentKindOf(r.reader->kind) == k;
      });
    };
    if (k != nullptr && k->diff_runs != nullptr && all_of_kind(eb) && all_of_kind(ea)) {
      return k->diff_runs(eb.inputs, ea.inputs, options);
    }
  }
  ASSIGN_OR_RETURN(std::vector<std::string> b, TracesOfSide(eb, baseline, "baseline"));
  ASSIGN_OR_RETURN(std::vector<std::string> a, TracesOfSide(ea, candidate, "candidate"));
  AnalyzeOptions o = options;
  o.diff.baseline_runs = static_cast<int>(b.size());
  TraceSet set;
  set.kind = TraceSetKind::kDiff;
  std::vector<std::string> files;
  for (size_t i = 0; i < b.size(); ++i) {
    set.members.emplace_back().label = RunLabel("baseline", i, b.size());
    files.push_back(b[i]);
  }
  for (size_t i = 0; i < a.size(); ++i) {
    set.members.emplace_back().label = RunLabel("candidate", i, a.size());
    files.push_back(a[i]);
  }
  return RunTraceSet(std::move(set), files, o);
}

StatusOr<SavedBaseline> CollectBaseline(const std::vector<std::string>& paths,
                                        const AnalyzeOptions& options,
                                        std::vector<std::string>* files) {
  ASSIGN_OR_RETURN(std::vector<std::string> traces, TracesOfSide(paths, "baseline"));
  SavedBaseline saved;
  saved.tool_version = SIGHTLINE_VERSION;
  saved.iterations_regex = options.iterations_regex;
  for (const std::string& path : traces) {
    ASSIGN_OR_RETURN(std::shared_ptr<AnalysisContext> context, ImportContext(path, options));
    ASSIGN_OR_RETURN(RunSamples run, CollectRunSamples(*context));
    if (run.iterations() == 0) {
      return InvalidInputError(fmt::format(
          "{}: no iterations found, and a baseline keeps per-iteration figures; name the "
          "iteration ranges with --iterations REGEX (docs/analyses/iterations.md)",
          path));
    }
    saved.runs.push_back(std::move(run));
  }
  if (files != nullptr) *files = std::move(traces);
  return saved;
}

StatusOr<Report> DiffAgainstBaseline(const std::string& baseline_file,
                                     const std::vector<std::string>& candidate,
                                     const AnalyzeOptions& options) {
  return DiffSamples({baseline_file}, candidate, options);
}

StatusOr<Report> DiffSamples(const std::vector<std::string>& baseline,
                             const std::vector<std::string>& candidate,
                             const AnalyzeOptions& options) {
  if (baseline.empty() || candidate.empty()) {
    return InvalidArgumentError(
        "diff needs runs on both sides: `sightline diff A1 A2 -- B1 B2` (traces or saved "
        "baselines), or `sightline diff --baseline FILE B1 ...`");
  }
  // The saved baselines first: their regex is the default for the traces.
  std::vector<std::pair<std::string, SavedBaseline>> saved;
  for (const std::vector<std::string>* side : {&baseline, &candidate}) {
    for (const std::string& path : *side) {
      if (!IsSavedBaseline(path)) continue;
      ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
      ASSIGN_OR_RETURN(SavedBaseline b, ParseBaseline(text, path));
      saved.emplace_back(path, std::move(b));
    }
  }
  AnalyzeOptions o = options;
  for (const auto& [path, b] : saved) {
    if (o.iterations_regex.empty()) o.iterations_regex = b.iterations_regex;
  }
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  // One side's runs: a saved baseline's runs, a trace's (or a directory's traces') samples.
  auto collect = [&](const std::vector<std::string>& paths, const char* side,
                     std::vector<std::vector<RunSamples>>& runs) -> Status {
    std::vector<std::string> traces;
    for (const std::string& path : paths) {
      auto it =
          std::find_if(saved.begin(), saved.end(), [&](const auto& s) { return s.first == path; });
      if (it == saved.end()) {
        traces.push_back(path);
        continue;
      }
      ReportInput& in = report.inputs.emplace_back();
      in.label = side;
      in.path = path;
      in.format = kBaselineFormat;
      in.format_version = std::to_string(kBaselineFormatVersion);
      in.producer = "sightline " + it->second.tool_version;
      // A saved baseline keeps each run's main loop only.
      for (const RunSamples& run : it->second.runs) runs.push_back({run});
    }
    if (traces.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(std::vector<std::string> files, TracesOfSide(traces, side));
    for (size_t i = 0; i < files.size(); ++i) {
      ASSIGN_OR_RETURN(std::shared_ptr<AnalysisContext> context, ImportContext(files[i], o));
      AddReportInput(*context, RunLabel(side, i, files.size()), report);
      ASSIGN_OR_RETURN(std::vector<RunSamples> run, CollectLoopSamples(*context));
      if (run[0].iterations() == 0) {
        return InvalidInputError(fmt::format(
            "{}: no iterations found, so it cannot be compared by iteration (with saved "
            "baselines the diff is the verdict alone); name the iteration ranges with "
            "--iterations REGEX",
            files[i]));
      }
      runs.push_back(std::move(run));
    }
    return Status::Ok();
  };
  std::vector<std::vector<RunSamples>> before, after;  // [run][loop]
  RETURN_IF_ERROR(collect(baseline, "baseline", before));
  RETURN_IF_ERROR(collect(candidate, "candidate", after));
  VerdictOptions vo;
  vo.threshold_pct = options.diff.fail_if_slower_pct;
  const LoopVerdicts verdict = ComputeLoopVerdicts(before, after, vo);
  AddVerdictSection(verdict, options.top_n, report);
  SetGateFromVerdict(verdict, report);
  return report;
}

}  // namespace sightline
