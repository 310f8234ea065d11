#include "pipeline/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <glob.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "analyses/common/analysis_context.h"
#include "analyses/findings/findings.h"
#include "analyses/iteration_log/iteration_log_summary.h"
#include "base/file_io.h"
#include "base/threads.h"
#include "facts/results_cache.h"
#include "importers/importer.h"
#include "importers/inputs.h"
#include "importers/recorder/run_processes.h"
#include "kernel/ncu_report.h"
#include "pipeline/rank_parts.h"
#include "pipeline/rank_workers.h"
#include "pipeline/snapshot_weights.h"
#include "pipeline/trace_sets.h"
#include "trt/trt_analysis.h"
#include "trt/trt_report.h"

namespace sightline {

int AddReportInput(const AnalysisContext& context, const std::string& label, Report& report) {
  const Trace& trace = context.trace();
  const int input = static_cast<int>(report.inputs.size());
  ReportInput& in = report.inputs.emplace_back();
  in.label = label;
  in.path = trace.source.path;
  in.format = trace.source.format;
  in.format_version = trace.source.format_version;
  in.producer = trace.source.producer;
  in.rank = trace.source.rank;
  in.diagnostics = trace.diagnostics;
  return input;
}

Status RunAnalyses(const std::vector<AnalysisEntry>& analyses, AnalysisContext& context, int input,
                   int threads, std::vector<Report>& parts, std::vector<Status>& status) {
  const size_t n = analyses.size();
  ASSIGN_OR_RETURN(const std::vector<std::vector<size_t>> needs, AnalysisNeeds(analyses));
  parts.assign(n, Report{});
  status.assign(n, Status::Ok());
  // An entry starts once the entries it needs are done (AnalysisEntry::needs), so the whole results
  // it reads are there. Alone, this thread runs them in the registry's order, each as soon as its
  // needs are done. Several threads take the next entry as they come free, and share the context's
  // facts (each built once, by the first that asks): first the entries others wait for (the
  // longest chain of waiting entries first), then from the end of the registry, where the findings
  // come last, read most of the facts and take longest.
  std::vector<std::vector<size_t>> waiting(n);  // the entries that need entry i
  std::vector<size_t> pending(n);               // needs of entry i not done yet
  for (size_t i = 0; i < n; ++i) {
    pending[i] = needs[i].size();
    for (size_t j : needs[i]) waiting[j].push_back(i);
  }
  threads = std::max(1, std::min(threads, static_cast<int>(n)));
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (threads > 1) {
    std::vector<size_t> chain(n, 0);  // the longest chain of entries waiting for entry i
    for (size_t round = 0; round < n; ++round) {  // acyclic: n rounds settle every chain
      for (size_t i = 0; i < n; ++i) {
        for (size_t j : needs[i]) chain[j] = std::max(chain[j], chain[i] + 1);
      }
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return chain[a] != chain[b] ? chain[a] > chain[b] : a > b;
    });
  }
  std::vector<std::exception_ptr> thrown(n);
  std::mutex mu;
  std::condition_variable done_one;
  std::vector<bool> taken(n, false);
  size_t taken_count = 0;
  auto work = [&] {
    std::unique_lock<std::mutex> lock(mu);
    while (taken_count < n) {
      auto next = std::find_if(order.begin(), order.end(),
                               [&](size_t i) { return !taken[i] && pending[i] == 0; });
      if (next == order.end()) {
        done_one.wait(lock);  // every entry left waits for one that runs now
        continue;
      }
      const size_t i = *next;
      taken[i] = true;
      ++taken_count;
      lock.unlock();
      try {
        status[i] = RunAnalysis(analyses[i], context, input, parts[i]);
      } catch (...) {
        thrown[i] = std::current_exception();  // rethrown on the calling thread (out of memory)
      }
      lock.lock();
      for (size_t w : waiting[i]) --pending[w];
      done_one.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    // No more threads to be had (ulimit -u): the ones started and this one do the work.
    if (!TryStartThread(pool, work)) break;
  }
  work();
  for (std::thread& t : pool) t.join();
  for (size_t i = 0; i < n && status[i].ok(); ++i) {
    if (thrown[i]) std::rethrow_exception(thrown[i]);
  }
  return Status::Ok();
}

Status AnalyzeTrace(AnalysisContext& context, const std::string& label, Report& report,
                    int threads) {
  const int input = AddReportInput(context, label, report);
  const std::vector<AnalysisEntry>& analyses = Analyses();
  // Each entry writes a report of its own; they are appended in the registry's order, so the
  // report is the same for any number of threads.
  std::vector<Report> parts;
  std::vector<Status> status;
  RETURN_IF_ERROR(RunAnalyses(analyses, context, input, threads, parts, status));
  bool added_findings = false;
  // An input without a timeline (a memory snapshot alone) shows only the sections it can fill.
  const Trace& trace = context.trace();
  const bool timeline = trace.kernels.size() + trace.memops.size() + trace.api_calls.size() +
                            trace.ranges.size() + trace.gil.size() + trace.os_calls.size() >
                        0;
  const size_t first_section = report.sections.size();
  for (size_t i = 0; i < analyses.size(); ++i) {
    if (!status[i].ok()) {
      return status[i].WithPrefix(
          fmt::format("{}: {}", context.trace().source.path, analyses[i].name));
    }
    if (!timeline && analyses[i].timeline) continue;
    for (Section& section : parts[i].sections) report.sections.push_back(std::move(section));
    added_findings = added_findings || !parts[i].findings.empty();
    for (Finding& f : parts[i].findings) report.findings.push_back(std::move(f));
  }
  if (!timeline && report.sections.size() > first_section) {
    report.sections[first_section].notes.push_back(
        "This input holds no timeline (no kernels, API calls or ranges), so the sections of a "
        "trace (overview, kernels, API calls, iterations, NVTX ranges, idle gaps) are left out: "
        "analyse it together with a trace of the same run (an nsys export, a PyTorch profiler "
        "trace or a `sightline record` recording) for those.");
  }
  // As RunFindings sorts the report's findings, those of earlier inputs included.
  if (added_findings) SortFindings(report.findings);
  return Status::Ok();
}

namespace {

// After the multi-trace analyses: the rules on the whole results they left in `results` (ranks,
// serving), then every input's findings ranked together (the ranks' parts arrive each ranked on
// its own).
Status AddSetFindings(const ResultsCache& results, const AnalyzeOptions& options, Report& report) {
  if (options.findings.enabled) {
    ASSIGN_OR_RETURN(std::vector<Finding> findings, ComputeFindings(results));
    AddFindings(std::move(findings), -1, report);
  }
  SortFindings(report.findings);
  return Status::Ok();
}

}  // namespace

StatusOr<std::shared_ptr<AnalysisContext>> ImportContext(const std::string& path,
                                                         const AnalyzeOptions& options) {
  ASSIGN_OR_RETURN(Trace trace, ImportTrace(path));
  if (trace.source.path.empty()) trace.source.path = path;
  return std::make_shared<AnalysisContext>(std::make_unique<const Trace>(std::move(trace)),
                                           options);
}

// Runs a TraceSet through the registries: per member, import, (for `analyze`) the single-trace
// analyses, then each multi-trace analysis of the set's kind sees the member; the member's trace
// is released unless an analysis keeps it. Multi-trace sections come first in the report.
StatusOr<Report> RunTraceSet(TraceSet set, const std::vector<std::string>& files,
                             const AnalyzeOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  std::vector<std::pair<const MultiTraceAnalysisEntry*, std::unique_ptr<MultiTraceAnalysis>>> multi;
  for (const MultiTraceAnalysisEntry& e : MultiTraceAnalyses()) {
    if (e.kind == set.kind) multi.push_back({&e, e.create(options)});
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    ASSIGN_OR_RETURN(std::shared_ptr<AnalysisContext> context, ImportContext(path, options));
    TraceSetMember& member = set.members[i];
    member.path = path;
    if (set.kind == TraceSetKind::kRanks) {
      const Trace& trace = context->trace();
      member.label = std::filesystem::path(path).filename().string();
      if (trace.source.rank >= 0) member.label += fmt::format(" (rank {})", trace.source.rank);
      member.input = static_cast<int>(report.inputs.size());
      RETURN_IF_ERROR(AnalyzeTrace(*context, member.label, report));
    } else {
      member.input = AddReportInput(*context, member.label, report);
    }
    for (auto& [entry, analysis] : multi) {
      Status s = analysis->Add(context, member);
      if (!s.ok()) return s.WithPrefix(fmt::format("{}: {}", path, entry->name));
    }
  }
  const size_t per_input_sections = report.sections.size();
  ResultsCache results;
  for (auto& [entry, analysis] : multi) {
    RETURN_IF_ERROR(analysis->Finish(set, report, results).WithPrefix(entry->name));
  }
  std::rotate(report.sections.begin(),
              report.sections.begin() + static_cast<std::ptrdiff_t>(per_input_sections),
              report.sections.end());
  RETURN_IF_ERROR(AddSetFindings(results, options, report));
  return report;
}

namespace {

// The ranks of one job (`analyze` with traces): each file reduced to a blob by the workers, the
// blobs merged in file order on process 0 (rank_parts.h). Falls back to RunTraceSet when a
// multi-trace analysis must keep whole traces (`--requests` joins the first trace).
StatusOr<Report> RunRankSet(const std::vector<std::string>& files, const AnalyzeOptions& options,
                            const RunOptions& run) {
  std::unique_ptr<RankWorkers> own;
  RankWorkers* workers = run.workers;
  if (!workers) {
    own = MakeThreadWorkers(run.jobs);
    workers = own.get();
  }
  std::vector<std::unique_ptr<MultiTraceAnalysis>> analyses;
  std::vector<const MultiTraceAnalysisEntry*> entries;
  std::vector<MultiTraceAnalysis*> multi;
  bool reducible = true;
  for (const MultiTraceAnalysisEntry& e : MultiTraceAnalyses()) {
    if (e.kind != TraceSetKind::kRanks) continue;
    analyses.push_back(e.create(options));
    entries.push_back(&e);
    multi.push_back(analyses.back().get());
    reducible = reducible && multi.back()->Reducible();
  }
  TraceSet set;
  set.kind = TraceSetKind::kRanks;
  set.members.resize(files.size());
  if (!reducible) {
    if (!workers->root()) return Report();  // process 0 reads every file
    return RunTraceSet(std::move(set), files, options);
  }

  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  RankProgress progress;
  progress.files_total = files.size();
  std::vector<uint64_t> sizes(files.size(), 0);
  if (workers->root()) {
    for (size_t i = 0; i < files.size(); ++i) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(files[i], ec);
      sizes[i] = ec ? 0 : static_cast<uint64_t>(size);
      progress.bytes_total += sizes[i];
    }
  }
  const bool sections = run.rank_sections == RunOptions::RankSections::kAll ||
                        (run.rank_sections == RunOptions::RankSections::kAuto &&
                         files.size() <= RunOptions::kAutoRankSections);
  // Cores the rank threads leave free go to each trace's analyses: one file on two cores has both
  // (an MPI process keeps one: its neighbours on the host may hold the others).
  const int analysis_threads =
      run.workers != nullptr
          ? 1
          : std::max(1, run.jobs / std::max(1, std::min(run.jobs, static_cast<int>(files.size()))));
  auto reduce = [&](size_t i) {
    return ReduceRankFile(files[i], options, multi, sections, analysis_threads);
  };
  auto merge = [&](size_t i, const std::string& blob) -> Status {
    set.members[i].path = files[i];
    RETURN_IF_ERROR(MergeRankPart(blob, set.members[i], report, multi));
    ++progress.files_done;
    progress.bytes_done += sizes[i];
    if (run.progress) run.progress(progress);
    return Status::Ok();
  };
  std::vector<WorkerShare> shares;
  RETURN_IF_ERROR(workers->Run(files.size(), reduce, merge, &shares));
  if (!workers->root()) return Report();

  const size_t per_input_sections = report.sections.size();
  ResultsCache results;
  for (size_t i = 0; i < multi.size(); ++i) {
    RETURN_IF_ERROR(multi[i]->Finish(set, report, results).WithPrefix(entries[i]->name));
  }
  std::rotate(report.sections.begin(),
              report.sections.begin() + static_cast<std::ptrdiff_t>(per_input_sections),
              report.sections.end());
  RETURN_IF_ERROR(AddSetFindings(results, options, report));
  if (!sections && run.rank_sections == RunOptions::RankSections::kAuto) {
    for (Section& s : report.sections) {
      if (s.key != "ranks") continue;
      s.notes.push_back(fmt::format(
          "{} ranks: only the ranks section and each input's diagnostics (more than {} ranks; "
          "--all-rank-sections keeps every rank's own sections, at the cost of process 0 holding "
          "them all)",
          files.size(), RunOptions::kAutoRankSections));
    }
  }
  if (workers->processes() > 1) {
    RunInfo& info = report.run;
    info.mpi_processes = workers->processes();
    for (const WorkerShare& share : shares) {
      if (info.slowest_process < 0 ||
          share.seconds > info.seconds_per_process[static_cast<size_t>(info.slowest_process)]) {
        info.slowest_process = static_cast<int>(info.seconds_per_process.size());
      }
      info.ranks_per_process.push_back(share.files);
      info.seconds_per_process.push_back(share.seconds);
    }
  }
  return report;
}

}  // namespace

namespace {

// `sightline analyze FILE...` where every file is a TensorRT export: one engine per distinct
// prefix, in the order given, each an input with its sections and the findings of the rules on
// engines. Errors name the file and what to do.
StatusOr<Report> AnalyzeTrtFiles(const std::vector<std::string>& paths,
                                 const AnalyzeOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  TrtReportOptions o;
  o.top_n = options.top_n;
  std::set<std::string> seen;
  for (const std::string& path : paths) {
    std::string prefix = TrtEnginePrefix(path);
    if (prefix.empty()) prefix = path;
    if (!seen.insert(prefix).second) continue;  // a sibling of an engine already read
    ASSIGN_OR_RETURN(TrtEngine engine, ReadTrtEngine(path));
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

// The inputs of one `analyze`, sorted by what they are.
struct SortedInputs {
  std::vector<std::string> traces, trt, ncu, ncu_source;
  std::string eager_reference;  // --eager-reference: a trace, not a rank
  std::vector<RecognisedInput> results, iteration_logs, model_configs;
  std::vector<std::string> skipped;
  std::vector<std::string> own_outputs;  // Sightline's own reports in a named directory
  std::vector<InputFile> read;           // every file and the reader that took it
};

StatusOr<SortedInputs> SortInputs(const std::vector<std::string>& paths, const NamedInputs& named) {
  SortedInputs s;
  ASSIGN_OR_RETURN(ExpandedInputs expanded, ExpandInputs(paths));
  s.skipped = std::move(expanded.skipped);
  s.own_outputs = std::move(expanded.own_outputs);
  auto named_input = [&](const std::string& path, InputKind kind,
                         std::string_view option) -> Status {
    if (path.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(RecognisedInput in, RecogniseInput(path));
    if (in.reader->kind != kind) {
      return InvalidArgumentError(
          fmt::format("{}: {} takes the kind '{}', but this file is of the kind '{}' ({}); give it "
                      "without the option: `sightline "
                      "analyze` sorts its inputs by what they are",
                      path, option, InputKindName(kind), InputKindName(in.reader->kind),
                      in.reader->description));
    }
    expanded.inputs.push_back(std::move(in));
    return Status::Ok();
  };
  RETURN_IF_ERROR(named_input(named.requests, InputKind::kServingResults, "--requests"));
  RETURN_IF_ERROR(named_input(named.iteration_log, InputKind::kIterationLog, "--iteration-log"));
  RETURN_IF_ERROR(named_input(named.model_config, InputKind::kModelConfig, "--model-config"));
  if (!named.eager_reference.empty()) {
    ASSIGN_OR_RETURN(RecognisedInput reference, RecogniseInput(named.eager_reference));
    if (reference.reader->kind != InputKind::kTrace) {
      return InvalidArgumentError(fmt::format(
          "{}: --eager-reference takes the kind 'trace' (the same program run eagerly, recorded "
          "separately), but this file is of the kind '{}' ({})",
          reference.path, InputKindName(reference.reader->kind), reference.reader->description));
    }
    s.read.push_back({reference.path, reference.reader->name, InputKindName(InputKind::kTrace),
                      "eager reference: its eager runs estimate the whole-graph runs"});
    s.eager_reference = reference.path;
  }
  for (RecognisedInput& in : expanded.inputs) {
    s.read.push_back({in.path, in.reader->name, InputKindName(in.reader->kind), ""});
    switch (in.reader->kind) {
      case InputKind::kTrace:
        s.traces.push_back(in.path);
        break;
      case InputKind::kServingResults:
        s.results.push_back(std::move(in));
        break;
      case InputKind::kIterationLog:
        s.iteration_logs.push_back(std::move(in));
        break;
      case InputKind::kTrtEngine:
        s.trt.push_back(in.path);
        break;
      case InputKind::kNcuExport:
        s.ncu.push_back(in.path);
        break;
      case InputKind::kNcuSource:
        s.ncu_source.push_back(in.path);
        break;
      case InputKind::kModelConfig:
        s.model_configs.push_back(std::move(in));
        break;
      case InputKind::kAllreduceSweep:
        return InvalidArgumentError(
            fmt::format("{}: an all-reduce sweep; `sightline allreduce plot|tune {}` reads it",
                        in.path, in.path));
    }
  }
  return s;
}

// What each file became, and what it joined, for the report's list of files read.
void DescribeUses(SortedInputs& in) {
  std::set<std::string> trees;  // processes documents beside the recordings that name them
  const std::string first_trace = in.traces.empty() ? "" : in.traces.front();
  for (InputFile& f : in.read) {
    if (!f.use.empty()) continue;  // said when it was read (--eager-reference)
    if (f.kind == InputKindName(InputKind::kServingResults)) {
      // Only a request log says in which iteration each token came out (serving_trace_join.h).
      f.use = first_trace.empty() || f.reader != std::string_view("request-log")
                  ? "serving metrics"
                  : fmt::format("serving metrics; its token gaps joined to {}'s iterations",
                                FileNameOf(first_trace));
    } else if (f.kind == InputKindName(InputKind::kIterationLog)) {
      f.use = first_trace.empty() ? "its own figures (no trace to join it to)"
                                  : "joined to each trace's iterations";
    } else if (f.kind == InputKindName(InputKind::kModelConfig)) {
      f.use = "the model's shapes, for the floor section";
    } else if (f.kind == InputKindName(InputKind::kTrace)) {
      const std::string tree = ProcessTreeOf(f.path, in.skipped);  // a recording of a run
      if (!tree.empty()) trees.insert(tree);
      f.use = !tree.empty()          ? fmt::format("a process of the run ({})", FileNameOf(tree))
              : in.traces.size() > 1 ? "a rank of the job"
                                     : "the trace";
    } else {
      f.use = "its own report";
    }
  }
  for (const std::string& path : in.skipped) {
    in.read.push_back({path, "", "",
                       trees.count(path) ? "the run's process tree, read with its recordings"
                                         : "skipped: no reader takes it (`sightline formats`)"});
  }
  for (const std::string& path : in.own_outputs) {
    in.read.push_back(
        {path, "", "", "skipped: a report Sightline wrote (an output, not an input)"});
  }
}

}  // namespace

StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths, const AnalyzeOptions& given,
                              const RunOptions& run, const NamedInputs& named) {
  ASSIGN_OR_RETURN(SortedInputs in, SortInputs(paths, named));
  const bool root = !run.workers || run.workers->root();
  AnalyzeOptions options = given;
  const size_t others = in.trt.size() + in.ncu.size() + in.ncu_source.size();
  const size_t timeline = in.traces.size() + in.results.size() + in.iteration_logs.size();
  if (others > 0 && timeline > 0) {
    return InvalidArgumentError(fmt::format(
        "analyze reads either traces (with their serving results and iteration logs) or {} in "
        "one run, not both; analyze them separately",
        !in.trt.empty() ? "a TensorRT engine's exports" : "Nsight Compute exports"));
  }
  if (!in.trt.empty() && (!in.ncu.empty() || !in.ncu_source.empty())) {
    return InvalidArgumentError(
        "analyze reads either a TensorRT engine's exports or Nsight Compute exports in one run, "
        "not both; analyze them separately");
  }
  if (others > 0 && !root) return Report();  // process 0 reads them
  if (!in.trt.empty()) {
    // TensorRT engine exports (trtexec, Trex) are not timelines: they have their own report.
    return AnalyzeTrtFiles(in.trt, given);
  }
  if (!in.ncu.empty() || !in.ncu_source.empty()) {
    std::vector<NcuExport> exports;
    std::vector<NcuSourceExport> sources;
    for (const std::string& p : in.ncu) {
      ASSIGN_OR_RETURN(InputDocument d, OpenInput(p));
      exports.push_back(std::move(std::get<NcuExport>(d.value)));
    }
    for (const std::string& p : in.ncu_source) {
      ASSIGN_OR_RETURN(InputDocument d, OpenInput(p));
      sources.push_back(std::move(std::get<NcuSourceExport>(d.value)));
    }
    NcuReportOptions o;
    o.top = given.top_n;
    Report report = BuildNcuReport(GroupNcuExports(std::move(exports)), o);
    AddNcuSourceSections(report, sources, given.top_n);
    return report;
  }
  if (in.results.size() > 1) {
    return InvalidArgumentError(fmt::format(
        "{} and {} are both serving results; one run analyses one benchmark's results (`sightline "
        "diff A B` compares two)",
        in.results[0].path, in.results[1].path));
  }
  if (in.iteration_logs.size() > 1) {
    return InvalidArgumentError(
        fmt::format("{} and {} are both iteration logs; one run joins one log to its traces",
                    in.iteration_logs[0].path, in.iteration_logs[1].path));
  }
  if (options.serving.slo.any() && in.results.empty()) {
    return InvalidArgumentError(
        "--slo needs serving results (a benchmark's results file among the inputs, or "
        "--requests): the SLOs are checked per request");
  }
  if (in.traces.empty() && in.results.empty() && in.iteration_logs.empty()) {
    return InvalidArgumentError("no trace, serving results or iteration log among the inputs");
  }
  // Read first: a bad file fails before any trace is imported.
  if (!in.results.empty()) {
    ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(in.results[0]));
    options.serving.requests =
        std::make_shared<const RequestResults>(std::move(std::get<RequestResults>(d.value)));
  }
  if (!in.iteration_logs.empty()) {
    ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(in.iteration_logs[0]));
    options.iteration_log.log =
        std::make_shared<const IterationLog>(std::move(std::get<IterationLog>(d.value)));
  }
  if (in.model_configs.size() > 1) {
    return InvalidArgumentError(fmt::format("{} and {} are both model configs; give one",
                                            in.model_configs[0].path, in.model_configs[1].path));
  }
  const FloorOptions& floor = options.floor;
  if (in.model_configs.empty() && named.weights_snapshot.empty() &&
      (floor.batch > 0 || floor.context >= 0 || floor.peak_bandwidth_gbps > 0 ||
       floor.peak_tflops > 0)) {
    return InvalidArgumentError(
        "--batch, --context, --peak-bandwidth and --peak-tflops are for the floor, which needs "
        "the model's config: add --model-config config.json (or a memory snapshot's weights: "
        "--weights-snapshot)");
  }
  if (!in.model_configs.empty()) {
    ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(in.model_configs[0]));
    options.floor.model =
        std::make_shared<const ModelConfig>(std::move(std::get<ModelConfig>(d.value)));
  }
  if (!named.weights_snapshot.empty()) {
    ASSIGN_OR_RETURN(InputFile f, AddSnapshotWeights(named.weights_snapshot, options));
    in.read.push_back(std::move(f));
  }
  if (!in.eager_reference.empty()) {
    if (in.traces.empty()) {
      return InvalidArgumentError(
          "--eager-reference needs a trace to estimate: its eager runs give the per-range time of "
          "the CUDA graphs another trace ran as a whole");
    }
    ASSIGN_OR_RETURN(InputDocument d, OpenInput(in.eager_reference));
    options.eager_reference = std::make_shared<const Trace>(std::move(std::get<Trace>(d.value)));
    options.eager_reference_path = in.eager_reference;
  }
  ASSIGN_OR_RETURN(Report report, RunRankSet(in.traces, options, run));
  // A log without the trace of its run: what the log itself states, and what the trace would add.
  if (root && in.traces.empty() && options.iteration_log.log) {
    AddIterationLogSummary(*options.iteration_log.log, report);
  }
  // The list of files read, when there is more to it than the traces' own inputs.
  if (root && (!in.results.empty() || !in.iteration_logs.empty() || !in.model_configs.empty() ||
               !in.skipped.empty() || !in.own_outputs.empty() || !in.eager_reference.empty())) {
    DescribeUses(in);
    report.files = std::move(in.read);
  }
  return report;
}

}  // namespace sightline
