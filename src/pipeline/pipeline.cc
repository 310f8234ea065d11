#include "pipeline/pipeline.h"

#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <system_error>
#include <thread>

#include "analyses/analysis_context.h"
#include "analyses/findings/findings.h"
#include "importers/importer.h"
#include "pipeline/rank_parts.h"
#include "pipeline/rank_workers.h"
#include "serving/serving_diff.h"
#include "trt/trt_diff.h"
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

Status AnalyzeTrace(AnalysisContext& context, const std::string& label, Report& report,
                    int threads) {
  const int input = AddReportInput(context, label, report);
  const std::vector<AnalysisEntry>& analyses = Analyses();
  auto failed = [&](const Status& s, const AnalysisEntry& a) {
    return s.WithPrefix(fmt::format("{}: {}", context.trace().source.path, a.name));
  };
  threads = std::min(threads, static_cast<int>(analyses.size()));
  if (threads <= 1) {
    for (const AnalysisEntry& a : analyses) {
      Status s = a.run(context, input, report);
      if (!s.ok()) return failed(s, a);
    }
    return Status::Ok();
  }
  // Each analysis writes a report of its own; they are appended in the registry's order, so the
  // report is the same as one thread's. The threads take the next analysis as they come free, and
  // share the context's facts (each built once, by the first that asks). They start from the end
  // of the registry: the findings come last there, read most of the facts and take longest, so
  // they start at once while the other threads work through the sections.
  std::vector<Report> parts(analyses.size());
  std::vector<Status> status(analyses.size());
  std::vector<std::exception_ptr> thrown(analyses.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t n = next++; n < analyses.size(); n = next++) {
      const size_t i = analyses.size() - 1 - n;
      try {
        status[i] = analyses[i].run(context, input, parts[i]);
      } catch (...) {
        thrown[i] = std::current_exception();  // rethrown on the calling thread (out of memory)
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones started and this one do the work
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  bool added_findings = false;
  for (size_t i = 0; i < analyses.size(); ++i) {
    if (thrown[i]) std::rethrow_exception(thrown[i]);
    if (!status[i].ok()) return failed(status[i], analyses[i]);
    for (Section& section : parts[i].sections) report.sections.push_back(std::move(section));
    added_findings = added_findings || !parts[i].findings.empty();
    for (Finding& f : parts[i].findings) report.findings.push_back(std::move(f));
  }
  // As RunFindings sorts the report's findings, those of earlier inputs included.
  if (added_findings) SortFindings(report.findings);
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

namespace {

StatusOr<std::shared_ptr<AnalysisContext>> Import(const std::string& path,
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
    ASSIGN_OR_RETURN(std::shared_ptr<AnalysisContext> context, Import(path, options));
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
  for (auto& [entry, analysis] : multi) {
    RETURN_IF_ERROR(analysis->Finish(set, report).WithPrefix(entry->name));
  }
  std::rotate(report.sections.begin(),
              report.sections.begin() + static_cast<std::ptrdiff_t>(per_input_sections),
              report.sections.end());
  return report;
}

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
  for (size_t i = 0; i < multi.size(); ++i) {
    RETURN_IF_ERROR(multi[i]->Finish(set, report).WithPrefix(entries[i]->name));
  }
  std::rotate(report.sections.begin(),
              report.sections.begin() + static_cast<std::ptrdiff_t>(per_input_sections),
              report.sections.end());
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

StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths, const AnalyzeOptions& options,
                              const RunOptions& run) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandTracePaths(paths));
  // TensorRT engine exports (trtexec, Trex) are not timelines: they have their own report.
  size_t trt = 0;
  for (const std::string& f : files) trt += LooksLikeTrtFile(f);
  if (trt > 0 && run.workers && !run.workers->root()) return Report();  // process 0 reads them
  if (trt > 0) {
    if (trt != files.size()) {
      return InvalidArgumentError(
          "analyze reads either TensorRT engine exports (trtexec --exportLayerInfo, "
          "--exportProfile, --exportTimes) or traces, not both in one run; analyze them "
          "separately");
    }
    if (options.requests || options.iteration_log) {
      return InvalidArgumentError(
          "--requests and --iteration-log join a trace; a TensorRT engine's exports have their "
          "own latency report: analyze them without these options");
    }
    TrtReportOptions o;
    o.top_n = options.top_n;
    o.findings = options.findings;
    return AnalyzeTrtFiles(files, o);
  }
  return RunRankSet(files, options, run);
}

StatusOr<Report> DiffFiles(const std::string& baseline, const std::string& candidate,
                           const AnalyzeOptions& options) {
  // Two serving runs (request results or request logs) compare as serving metrics.
  const bool serving_b = LooksLikeRequestResultsFile(baseline);
  const bool serving_a = LooksLikeRequestResultsFile(candidate);
  if (serving_b != serving_a) {
    return InvalidArgumentError(
        fmt::format("{} is {} but {} is {}: diff compares two traces or two serving results",
                    baseline, serving_b ? "serving results" : "a trace", candidate,
                    serving_a ? "serving results" : "a trace"));
  }
  if (serving_b) {
    Report report;
    report.tool_version = SIGHTLINE_VERSION;
    ServingMetricsOptions o;
    o.slo = options.slo;
    ServingMetrics metrics[2];
    int side = 0;
    for (const std::string* path : {&baseline, &candidate}) {
      ASSIGN_OR_RETURN(RequestResults r, ReadRequestResults(*path));
      ASSIGN_OR_RETURN(metrics[side], ComputeServingMetrics(r, o));
      ReportInput& in = report.inputs.emplace_back();
      in.label = side == 0 ? "baseline" : "candidate";
      in.path = *path;
      in.format = r.format;
      in.producer = r.producer;
      ++side;
    }
    AddServingDiff(metrics[0], metrics[1], options.diff_fail_if_slower_pct, report);
    return report;
  }
  // Two TensorRT engines compare per layer, type and precision.
  const bool trt_b = LooksLikeTrtFile(baseline);
  const bool trt_a = LooksLikeTrtFile(candidate);
  if (trt_b || trt_a) {
    if (trt_b != trt_a) {
      return InvalidArgumentError(
          fmt::format("{} is {} but {} is {}: diff compares two TensorRT engines or two traces",
                      baseline, trt_b ? "a TensorRT engine export" : "not", candidate,
                      trt_a ? "a TensorRT engine export" : "not"));
    }
    TrtDiffOptions o;
    o.top_n = options.top_n;
    o.min_share_pct = options.diff_min_share_pct;
    o.fail_if_slower_pct = options.diff_fail_if_slower_pct;
    return DiffTrtEngines(baseline, candidate, o);
  }
  TraceSet set;
  set.kind = TraceSetKind::kDiff;
  set.members.resize(2);
  set.members[0].label = "baseline";
  set.members[1].label = "candidate";
  return RunTraceSet(std::move(set), {baseline, candidate}, options);
}

}  // namespace sightline
