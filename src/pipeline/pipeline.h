// The analyze and diff pipelines end to end: import each trace into an AnalysisContext, run the
// registered single-trace analyses on it and hand it to the registered multi-trace analyses of its
// TraceSet's kind, collect the diagnostics into a Report. The CLI and the golden tests share it so
// they cannot drift apart. Nothing is wired by hand: the registries decide what runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "diff/baseline_file.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

class RankWorkers;  // pipeline/rank_workers.h

// How far a multi-rank `analyze` has come (process 0's view: files merged so far).
struct RankProgress {
  size_t files_done = 0, files_total = 0;
  uint64_t bytes_done = 0, bytes_total = 0;  // sizes of the files, as stored
};

// How the ranks of a multi-rank `analyze` are spread: over `workers` (MPI processes,
// distributed/mpi_workers.h) or, when null, over `jobs` threads of this process. The report is the
// same either way, except Report::run under MPI.
struct RunOptions {
  RankWorkers* workers = nullptr;
  int jobs = 1;
  std::function<void(const RankProgress&)> progress;  // called on process 0 after each file
  // kNone (--ranks-only): the single-trace analyses do not run and each rank keeps only its input
  // record (with its diagnostics); the report is the ranks section and its finding, and process 0
  // holds the collective tables, not every rank's sections. kAuto: every rank's sections up to
  // kAutoRankSections ranks, none above (a note says so), so that a big job's process 0 holds
  // about one rank's import plus the collective tables. kAll (--all-rank-sections): always.
  enum class RankSections { kAuto, kAll, kNone };
  static constexpr size_t kAutoRankSections = 16;
  RankSections rank_sections = RankSections::kAuto;
};

// All multi-trace analyses (ranks, diff), in report order (pipeline/registry.cc).
const std::vector<MultiTraceAnalysisEntry>& MultiTraceAnalyses();

// A file named by an option of `analyze` (--requests, --iteration-log, --model-config,
// --eager-reference): the document kind whose `option` it is (analyses/common/document_kind.h)
// takes it, and it must be of that kind. An empty path names nothing.
struct NamedInput {
  std::string option;  // "--requests"
  std::string path;
};
using NamedInputs = std::vector<NamedInput>;

// `sightline analyze`: every path (files, directories, unexpanded globs) goes through the front
// door (importers/inputs.h) and is sorted by its kind of document (DocumentKinds()), whose entry
// says what becomes of it. Traces form a TraceSet of kind kRanks: two or more are the ranks of one
// job, and the "ranks" section and the straggler finding come first (docs/analyses/ranks.md).
// Documents that join the run (serving results, an iteration log, a model config, at most one of
// each) are read first, once, into the run's RunInputs (analyses/common/run_inputs.h), which
// every trace's context shares; a kind with a report of its own (a TensorRT engine's
// exports, Nsight Compute exports) is analysed alone. In a directory, files no reader takes are
// skipped and listed in Report::files. The first error is returned. Each trace is imported,
// analysed and reduced where a worker has it (pipeline/rank_parts.h); on processes other than MPI
// process 0 the returned report is empty and must not be written.
StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths, const AnalyzeOptions& options,
                              const RunOptions& run = {}, const NamedInputs& named = {});

// `sightline diff`: a TraceSet of kind kDiff (inputs "baseline" and "candidate"); the gate's
// verdict is in Report::gate (docs/analyses/diff.md).
StatusOr<Report> DiffFiles(const std::string& baseline, const std::string& candidate,
                           const AnalyzeOptions& options);

// `sightline diff` with one or more runs per side (`diff A1 A2 -- B1 B2`, or a directory per
// side): one input per side is DiffFiles; several must all be traces, and the verdict resamples
// runs, then iterations (docs/analyses/diff.md, "Verdict"). A saved baseline among the inputs
// makes it DiffSamples.
StatusOr<Report> DiffRuns(const std::vector<std::string>& baseline,
                          const std::vector<std::string>& candidate, const AnalyzeOptions& options);

// `sightline baseline save NAME TRACES...`: each trace's per-iteration figures (every trace must
// have iterations), ready for SerializeBaseline (diff/baseline_file.h); `files` gets the traces
// read, after directories are expanded.
StatusOr<SavedBaseline> CollectBaseline(const std::vector<std::string>& paths,
                                        const AnalyzeOptions& options,
                                        std::vector<std::string>* files = nullptr);

// `sightline diff --baseline FILE TRACES...`: DiffSamples({FILE}, TRACES).
StatusOr<Report> DiffAgainstBaseline(const std::string& baseline_file,
                                     const std::vector<std::string>& candidate,
                                     const AnalyzeOptions& options);

// The verdict alone over each side's runs, where each input is a saved baseline (its runs), a
// trace or a directory of traces (their per-iteration samples; each must have iterations): two
// saved baselines compare without their traces. Without --iterations the first saved baseline's
// regex is used for the traces.
StatusOr<Report> DiffSamples(const std::vector<std::string>& baseline,
                             const std::vector<std::string>& candidate,
                             const AnalyzeOptions& options);

// Adds the context's trace to `report` as a new input; returns its input index.
int AddReportInput(const AnalysisContext& context, const std::string& label, Report& report);

// Adds one imported trace to `report` as a new input and runs every single-trace analysis on it,
// on up to `threads` threads (this one included); the report is the same for any number.
Status AnalyzeTrace(AnalysisContext& context, const std::string& label, Report& report,
                    int threads = 1);

// AnalyzeTrace's scheduler: runs each of `analyses` (RunAnalysis) into parts[i], its status into
// status[i], on up to `threads` threads (this one included), each entry only once the entries it
// needs (AnalysisEntry::needs) are done; then rethrows what an entry threw (out of memory), the
// first in registry order before any failed entry. An error only when the needs name no entry or
// form a cycle (AnalysisNeeds).
Status RunAnalyses(const std::vector<AnalysisEntry>& analyses, AnalysisContext& context, int input,
                   int threads, std::vector<Report>& parts, std::vector<Status>& status);

}  // namespace sightline
