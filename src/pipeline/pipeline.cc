#include "pipeline/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "analyses/common/analysis_context.h"
#include "analyses/common/document_kind.h"
#include "analyses/findings/findings.h"
#include "base/threads.h"
#include "base/work_share.h"
#include "importers/inputs.h"
#include "pipeline/rank_parts.h"
#include "pipeline/rank_workers.h"
#include "pipeline/trace_sets.h"

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
  size_t running = 0;
  // Several threads: an entry may split its work (AnalysisContext::work_share, as the findings'
  // rules do); the threads with no entry to take help with it until the last entry ends.
  WorkShare share([&] {
    std::lock_guard<std::mutex> lock(mu);
    done_one.notify_all();
  });
  struct ShareScope {
    AnalysisContext& context;
    ~ShareScope() { context.set_work_share(nullptr); }
  } share_scope{context};
  if (threads > 1) context.set_work_share(&share);
  // Several threads: the facts the first entries would all wait for are built side by side first
  // (TraceFacts::IndependentFirstFacts). A fact whose build throws is built again by the entry
  // that asks for it (std::call_once), which then reports the error.
  std::vector<std::function<void()>> first_facts;
  if (threads > 1) first_facts = context.facts().IndependentFirstFacts();
  std::atomic<size_t> next_fact{0};
  auto work = [&] {
    for (size_t f; (f = next_fact.fetch_add(1)) < first_facts.size();) {
      try {
        first_facts[f]();
      } catch (...) {
      }
    }
    std::unique_lock<std::mutex> lock(mu);
    while (taken_count < n || running > 0) {
      auto next = std::find_if(order.begin(), order.end(),
                               [&](size_t i) { return !taken[i] && pending[i] == 0; });
      if (next == order.end()) {
        if (share.HasTasks()) {
          lock.unlock();
          share.Help();
          lock.lock();
        } else {
          done_one.wait(lock);  // every entry left waits for one that runs now
        }
        continue;
      }
      const size_t i = *next;
      taken[i] = true;
      ++taken_count;
      ++running;
      lock.unlock();
      try {
        status[i] = RunAnalysis(analyses[i], context, input, parts[i]);
      } catch (...) {
        thrown[i] = std::current_exception();  // rethrown on the calling thread (out of memory)
      }
      lock.lock();
      --running;
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

// The ranks of one job (`analyze` with traces): each file reduced to a blob by the workers, the
// blobs merged in file order on process 0 (rank_parts.h). Every multi-trace analysis of a rank set
// reduces today (serving too: serving_analysis.cc), whatever the run's other documents; one that
// had to keep whole traces would send the set to RunTraceSet, on process 0 alone.
StatusOr<Report> RunRankSet(const std::vector<std::string>& files, const AnalyzeOptions& options,
                            const RunInputs& inputs, const RunOptions& run) {
  std::unique_ptr<RankWorkers> own;
  RankWorkers* workers = run.workers;
  if (!workers) {
    own = MakeThreadWorkers(run.jobs);
    workers = own.get();
  }
  std::vector<MultiTraceRun> analyses =
      CreateMultiTraceAnalyses(TraceSetKind::kRanks, options, inputs);
  std::vector<MultiTraceAnalysis*> multi;
  bool reducible = true;
  for (MultiTraceRun& m : analyses) {
    multi.push_back(m.analysis.get());
    reducible = reducible && m.analysis->Reducible();
  }
  TraceSet set;
  set.kind = TraceSetKind::kRanks;
  set.members.resize(files.size());
  for (size_t i = 0; i < files.size(); ++i) set.members[i].index = static_cast<int>(i);
  if (!reducible) {
    if (!workers->root()) return Report();  // process 0 reads every file
    return RunTraceSet(std::move(set), files, options, inputs);
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
    return ReduceRankFile(files[i], i, options, inputs, multi, sections, analysis_threads);
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

  RETURN_IF_ERROR(FinishTraceSet(set, analyses, options, report));
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

// The inputs of one `analyze`, each with its kind of document (analyses/common/document_kind.h).
struct SortedInputs {
  // In the order given; the documents only an option names (the eager reference) first.
  std::vector<std::pair<const DocumentKind*, RecognisedInput>> inputs;
  std::vector<std::string> members;  // the run's traces: the inputs of a kMember kind
  std::vector<std::string> skipped;
  std::vector<std::string> own_outputs;  // Sightline's own reports in a named directory
  std::vector<InputFile> read;           // every input and the reader that took it

  std::vector<RecognisedInput> Of(const DocumentKind* kind) const {
    std::vector<RecognisedInput> out;
    for (const auto& [k, in] : inputs) {
      if (k == kind) out.push_back(in);
    }
    return out;
  }
};

// A file named by an option of `analyze` must be of the kind the option takes.
StatusOr<RecognisedInput> RecogniseNamed(const NamedInput& named, const DocumentKind& kind) {
  ASSIGN_OR_RETURN(RecognisedInput in, RecogniseInput(named.path));
  const auto& takes = kind.documents;
  if (std::find(takes.begin(), takes.end(), in.reader->kind) != takes.end()) return in;
  const std::string wanted = InputKindName(takes.front());
  if (*kind.option_note != '\0') {
    return InvalidArgumentError(
        fmt::format("{}: {} takes the kind '{}' ({}), but this file is of the kind '{}' ({})",
                    in.path, named.option, wanted, kind.option_note, InputKindName(in.reader->kind),
                    in.reader->description));
  }
  return InvalidArgumentError(fmt::format(
      "{}: {} takes the kind '{}', but this file is of the kind '{}' ({}); give it "
      "without the option: `sightline analyze` sorts its inputs by what they are",
      in.path, named.option, wanted, InputKindName(in.reader->kind), in.reader->description));
}

StatusOr<SortedInputs> SortInputs(const std::vector<std::string>& paths, const NamedInputs& named) {
  SortedInputs s;
  ASSIGN_OR_RETURN(ExpandedInputs expanded, ExpandInputs(paths));
  s.skipped = std::move(expanded.skipped);
  s.own_outputs = std::move(expanded.own_outputs);
  std::vector<std::pair<const DocumentKind*, RecognisedInput>> named_inputs;
  for (const NamedInput& n : named) {
    if (n.path.empty()) continue;
    const DocumentKind* kind = DocumentKindOfOption(n.option);
    if (kind == nullptr) {
      return InvalidArgumentError(
          fmt::format("{}: no kind of document is named by {}", n.path, n.option));
    }
    ASSIGN_OR_RETURN(RecognisedInput in, RecogniseNamed(n, *kind));
    (kind->named_only ? s.inputs : named_inputs).emplace_back(kind, std::move(in));
  }
  for (RecognisedInput& in : expanded.inputs) {
    const DocumentKind* kind = DocumentKindOf(in.reader->kind);
    if (kind == nullptr) {
      return InvalidArgumentError(fmt::format("{}: {} is no kind of document `analyze` reads",
                                              in.path, InputKindName(in.reader->kind)));
    }
    if (kind->role == DocumentKind::Role::kElsewhere) {
      return InvalidArgumentError(fmt::format(fmt::runtime(kind->elsewhere), in.path));
    }
    s.inputs.emplace_back(kind, std::move(in));
  }
  for (auto& n : named_inputs) s.inputs.push_back(std::move(n));
  for (const auto& [kind, in] : s.inputs) {
    s.read.push_back({in.path, in.reader->name, InputKindName(in.reader->kind), ""});
    if (kind->role == DocumentKind::Role::kMember) s.members.push_back(in.path);
  }
  return s;
}

// What each file became, and what it joined, for the report's list of files read.
void DescribeUses(SortedInputs& in) {
  FilesView run;
  run.first_member = in.members.empty() ? "" : in.members.front();
  run.members = in.members.size();
  run.skipped = &in.skipped;
  std::map<std::string, std::string> companions;  // skipped files that belong with an input
  for (size_t i = 0; i < in.read.size(); ++i) {
    const DocumentKind& kind = *in.inputs[i].first;
    if (kind.use != nullptr) in.read[i].use = kind.use(in.read[i], run, companions);
  }
  for (const std::string& path : in.skipped) {
    auto it = companions.find(path);
    in.read.push_back({path, "", "",
                       it != companions.end()
                           ? it->second
                           : "skipped: no reader takes it (`sightline formats`)"});
  }
  for (const std::string& path : in.own_outputs) {
    in.read.push_back(
        {path, "", "", "skipped: a report Sightline wrote (an output, not an input)"});
  }
}

// The kinds with a report of their own stand alone: never with the run's documents, nor with
// another such kind. Returns the one present (null when none).
StatusOr<const DocumentKind*> AloneKind(const SortedInputs& in) {
  std::vector<const DocumentKind*> alone;
  bool leads = false;
  for (const DocumentKind* kind : DocumentKinds()) {
    const bool present = std::any_of(in.inputs.begin(), in.inputs.end(),
                                     [&](const auto& input) { return input.first == kind; });
    if (!present) continue;
    if (kind->role == DocumentKind::Role::kAlone) alone.push_back(kind);
    leads = leads || kind->leads;
  }
  if (alone.empty()) return nullptr;
  if (leads) {
    std::string run, joined;
    std::vector<std::string> joins;
    for (const DocumentKind* kind : DocumentKinds()) {
      if (!kind->leads) continue;
      if (kind->role == DocumentKind::Role::kMember && run.empty()) run = kind->plural;
      if (kind->role == DocumentKind::Role::kJoins) joins.push_back(kind->plural);
    }
    return InvalidArgumentError(fmt::format(
        "analyze reads either {} (with their {}) or {} in one run, not both; analyze them "
        "separately",
        run, ListOfKinds(joins, "and"), alone.front()->alone_phrase));
  }
  if (alone.size() > 1) {
    return InvalidArgumentError(
        fmt::format("analyze reads either {} or {} in one run, not both; analyze them separately",
                    alone[0]->alone_phrase, alone[1]->alone_phrase));
  }
  return alone.front();
}

}  // namespace

StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths, const AnalyzeOptions& options,
                              const RunOptions& run, const NamedInputs& named) {
  ASSIGN_OR_RETURN(SortedInputs in, SortInputs(paths, named));
  const bool root = !run.workers || run.workers->root();
  ASSIGN_OR_RETURN(const DocumentKind* alone, AloneKind(in));
  if (alone != nullptr) {
    if (!root) return Report();  // process 0 reads them
    return alone->analyze(in.Of(alone), options);
  }
  // The documents joined to the run: each checked first, so that a bad one fails before any
  // trace is imported, then read into the run's inputs, in the registry's order.
  std::vector<std::string> leading;
  bool led = false;
  for (const DocumentKind* kind : DocumentKinds()) {
    const std::vector<RecognisedInput> of = in.Of(kind);
    if (kind->leads) leading.push_back(kind->name);
    led = led || (kind->leads && !of.empty());
    if (kind->role != DocumentKind::Role::kJoins) continue;
    if (of.size() > 1) {
      return InvalidArgumentError(fmt::format("{} and {} are both {}; {}", of[0].path, of[1].path,
                                              kind->plural, kind->one_only));
    }
    if (of.empty() && kind->check_absent != nullptr) RETURN_IF_ERROR(kind->check_absent(options));
    if (!of.empty() && in.members.empty() && *kind->needs_members != '\0') {
      return InvalidArgumentError(kind->needs_members);
    }
  }
  if (!led) {
    return InvalidArgumentError(fmt::format("no {} among the inputs", ListOfKinds(leading, "or")));
  }
  RunInputs inputs;
  bool joined = false;
  for (const auto& [kind, input] : in.inputs) {
    if (kind->role != DocumentKind::Role::kJoins) continue;
    RETURN_IF_ERROR(kind->join(input, inputs));
    joined = true;
  }
  ASSIGN_OR_RETURN(Report report, RunRankSet(in.members, options, inputs, run));
  if (root && in.members.empty()) {
    for (const DocumentKind* kind : DocumentKinds()) {
      if (kind->without_members != nullptr && !in.Of(kind).empty()) {
        kind->without_members(inputs, report);
      }
    }
  }
  // The list of files read, when there is more to it than the traces' own inputs.
  if (root && (joined || !in.skipped.empty() || !in.own_outputs.empty())) {
    DescribeUses(in);
    report.files = std::move(in.read);
  }
  return report;
}

}  // namespace sightline
