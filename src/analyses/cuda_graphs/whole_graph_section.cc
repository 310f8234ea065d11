#include "analyses/cuda_graphs/whole_graph_section.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace sightline {
namespace {

// How a graph's eager runs were chosen, in a few words: "eager runs of batch 4 (iteration log)",
// "all eager runs", "all eager runs (none of batch 4)".
std::string EagerSelectionText(const WholeGraphEstimate::Graph& g) {
  switch (g.selection) {
    case EagerSelection::kAll:
      break;
    case EagerSelection::kOfBatch:
      return fmt::format("eager runs of batch {} (iteration log)", g.batch);
    case EagerSelection::kAllNoneOfBatch:
      return fmt::format("all eager runs (none of batch {})", g.batch);
    case EagerSelection::kAllGraphUnknown:
      return "all eager runs (graph's batch unknown)";
    case EagerSelection::kAllNoEagerBatch:
      return "all eager runs (eager reference)";
  }
  return "all eager runs";
}

// The same, with where the batch came from and why all the runs were taken, for the note.
std::string EagerSelectionDetail(const WholeGraphEstimate::Graph& g) {
  const char* from = g.batch_source == GraphBatchSource::kGraphBatch
                         ? "the graph_batch_size of the steps holding its runs"
                         : "the largest real batch of the steps holding its runs";
  switch (g.selection) {
    case EagerSelection::kAll:
      break;
    case EagerSelection::kOfBatch:
      return fmt::format("the eager runs of batch {}, {}", g.batch, from);
    case EagerSelection::kAllNoneOfBatch: {
      std::vector<std::string> batches;
      for (const int64_t b : g.candidate_batches) {
        batches.push_back(b > 0 ? std::to_string(b) : std::string("none stated"));
      }
      return fmt::format(
          "all eager runs: its batch is {} ({}), but of the {} eager runs that match the "
          "capture none is of that batch (theirs: {})",
          g.batch, from, g.eager_candidates, fmt::join(batches, ", "));
    }
    case EagerSelection::kAllGraphUnknown:
      return "all eager runs: the iteration log states no batch for the steps holding its runs";
    case EagerSelection::kAllNoEagerBatch:
      return "all eager runs: they come from the eager reference trace, which the iteration log "
             "does not cover";
  }
  return "all eager runs";
}

// What the iteration log gave the choice of eager runs, and what it could not give: facts and a
// note (only with a log).
void AddStepBatches(const WholeGraphEstimate& e, const GraphStepBatches& sb, Section& s) {
  s.AddFact("iteration_log_steps", "Iteration log lines joined to steps", sb.steps, Unit::kCount);
  int64_t own = 0, estimated = 0;
  for (const WholeGraphEstimate::Graph& g : e.graphs) {
    if (g.eager_runs == 0) continue;
    ++estimated;
    own += g.selection == EagerSelection::kOfBatch;
  }
  s.AddFact("graphs_of_own_batch", "Graphs estimated from eager runs of their own batch", own,
            Unit::kCount);
  if (sb.without_batch > 0) {
    s.AddFact("steps_without_batch", "Joined lines that give no batch", sb.without_batch,
              Unit::kCount);
  }
  if (sb.garbage > 0) {
    s.AddFact("steps_bad_batch", "Joined lines with a bad batch value", sb.garbage, Unit::kCount);
  }
  if (e.runs_without_batch > 0) {
    s.AddFact("whole_runs_without_batch", "Whole-graph runs in no step with a batch",
              e.runs_without_batch, Unit::kCount);
  }
  std::string note = fmt::format(
      "Eager runs chosen by batch size from the iteration log ({} lines joined to the trace by "
      "{}): a graph's batch is the graph_batch_size of the steps holding its runs (else the "
      "largest real batch among them), an eager run's the real batch (generation_requests, else "
      "active_requests) of the step holding it; {} of {} estimated graphs use only the eager "
      "runs of their own batch.",
      sb.steps, sb.join, own, estimated);
  if (sb.steps == 0) {
    note += fmt::format(
        " No line joined a step of the trace ({}), so every graph takes all the "
        "eager runs.",
        sb.note.empty() ? std::string("no iterations to join") : sb.note);
  } else if (!sb.note.empty()) {
    note += " Iteration log: " + sb.note + ".";
  }
  if (sb.without_batch > 0 || sb.garbage > 0) {
    std::vector<std::string> why;
    if (sb.nothing_stated > 0) {
      why.push_back(
          fmt::format("{} state no generation_requests or active_requests (or 0) and no "
                      "graph_batch_size",
                      sb.nothing_stated));
    }
    if (sb.bad_batch > 0) why.push_back(fmt::format("{} a negative request count", sb.bad_batch));
    if (sb.bad_graph > 0) {
      why.push_back(fmt::format(
          "{} a graph_batch_size (or padded_ / cuda_graph_batch_size) that is no positive integer",
          sb.bad_graph));
    }
    if (sb.with_context > 0) {
      why.push_back(
          fmt::format("{} context (prefill) work, whose kernels follow the prompt "
                      "tokens, not the batch",
                      sb.with_context));
    }
    note += fmt::format(
        " {} of the {} joined lines give no batch, so their steps choose nothing; of the lines, "
        "{}.",
        sb.without_batch, sb.steps, fmt::join(why, "; "));
  }
  if (e.runs_without_batch > 0) {
    note += fmt::format(" {} of the {} whole-graph runs lie in no step that states a batch.",
                        e.runs_without_batch, e.whole_runs);
  }
  s.notes.push_back(std::move(note));
}

}  // namespace

bool AddWholeGraphEstimate(const WholeGraphEstimate& e, const GraphStepBatches* sb, int top_n,
                           Section& s) {
  if (e.graphs.empty()) return false;
  s.AddFact("whole_graphs", "Graphs traced as a whole", static_cast<int64_t>(e.graphs.size()),
            Unit::kCount);
  s.AddFact("capture_windows", "Captures in the trace (BeginCapture .. EndCapture)",
            e.capture_windows, Unit::kCount);
  s.AddFact("whole_graphs_estimated", "Graphs estimated from an eager run", e.graphs_estimated,
            Unit::kCount);
  if (sb != nullptr) AddStepBatches(e, *sb, s);
  if (e.graphs_paired < static_cast<int64_t>(e.graphs.size())) {
    s.notes.push_back(fmt::format(
        "{} of {} graphs traced as a whole could not be paired with their capture: a graph's "
        "creation record (nsys CUDA_GRAPH_EVENTS) must fall inside a capture in the trace, or, "
        "without creation records, a process's captures pair with its graphs in order only when "
        "it has as many captures in the trace as graphs with runs (here {} captures in all); keep "
        "every capture inside the recorded window, or trace the graphs node by node.",
        static_cast<int64_t>(e.graphs.size()) - e.graphs_paired, e.graphs.size(),
        e.capture_windows));
  }
  if (e.work_cut > 0) {
    s.notes.push_back(fmt::format(
        "{} candidate eager runs were not compared: the estimate's bound on work (4e8 table "
        "cells) was spent on the others.",
        e.work_cut));
  }
  if (e.graphs_estimated == 0) return false;
  Table& per =
      s.AddTable("whole_graphs", "Graphs traced as a whole: the eager runs of each estimate",
                 {{"graph", "Graph", Unit::kNumber},
                  {"runs", "Runs", Unit::kCount},
                  {"median_run_ns", "Median run", Unit::kDurationNs},
                  {"est_gpu_ns", "Est. kernels/replay", Unit::kDurationNs},
                  {"batch", "Batch", Unit::kCount},
                  {"eager_runs", "Eager runs", Unit::kCount},
                  {"eager_candidates", "Matching", Unit::kCount},
                  {"eager_selection", "Eager runs used", Unit::kText},
                  {"selection", "Selection", Unit::kText, /*optional=*/true},
                  {"capture_range", "Capture in", Unit::kText, /*optional=*/true}});
  Table& t = s.AddTable("whole_graph_estimate",
                        "Graphs traced as a whole: GPU time per range, estimated from eager runs",
                        {{"graph", "Graph", Unit::kNumber},
                         {"launches", "Launches", Unit::kCount},
                         {"matched", "Matched", Unit::kCount},
                         {"per_replay_ns", "Est. GPU/replay", Unit::kDurationNs},
                         {"share_pct", "Share", Unit::kPercent},
                         {"path", "Ranges at capture", Unit::kText}});
  std::string per_graph;
  size_t rows = 0, shown = 0;
  int64_t fell_back = 0;
  for (const WholeGraphEstimate::Graph& g : e.graphs) {
    if (g.eager_runs == 0) continue;
    const DurationNs between = g.median_run_ns - g.eager_ns;
    fell_back += g.selection != EagerSelection::kAll && g.selection != EagerSelection::kOfBatch;
    per.rows.push_back({g.graph_id, g.runs, g.median_run_ns, g.eager_ns,
                        g.batch > 0 ? Value(g.batch) : Value(), g.eager_runs, g.eager_candidates,
                        EagerSelectionText(g), std::string(EagerSelectionName(g.selection)),
                        g.capture_range});
    per_graph += fmt::format(
        " Graph {}: {} runs, median {:.1f} us; capture{} found by {}; {} of {} captured launches "
        "matched over {} eager runs ({}{}; the first: '{}'); their kernels take {:.1f} us per "
        "replay, {}.",
        g.graph_id, g.runs, static_cast<double>(g.median_run_ns) / 1e3,
        g.capture_range.empty() ? std::string() : fmt::format(" (in '{}')", g.capture_range),
        g.by_creation ? "the graph's creation record" : "order (as many captures as graphs)",
        g.matched, g.launches, g.eager_runs, EagerSelectionDetail(g),
        g.runs_other_batch > 0
            ? fmt::format("; {} of its runs lie in steps naming another graph batch",
                          g.runs_other_batch)
            : std::string(),
        g.eager_range, static_cast<double>(g.eager_ns) / 1e3,
        between >= 0 ? fmt::format("so about {:.1f} us of a run lies between its kernels",
                                   static_cast<double>(between) / 1e3)
                     : std::string("more than a whole run: the graph runs its kernels faster "
                                   "than the eager step, or overlaps them"));
    for (const WholeGraphEstimate::Range& row : g.ranges) {
      ++rows;
      if (static_cast<int>(shown) >= std::max(top_n, 1) * 4) continue;
      ++shown;
      t.rows.push_back(
          {g.graph_id, row.launches, row.matched, row.eager_ns, 100.0 * row.share, row.path});
    }
  }
  per.note =
      "Est. kernels/replay = the matched eager kernels' durations summed over the graph's ranges, "
      "per eager run; Eager runs = those averaged (the best matches among the eager runs used), "
      "Matching = the eager runs that match the capture at all; Batch = the graph's batch size "
      "from the iteration log.";
  if (fell_back > 0) {
    s.notes.push_back(fmt::format(
        "{} graphs took all the eager runs instead of those of their own batch size (Eager runs "
        "used says why): their estimates mix batch sizes.",
        fell_back));
  }
  t.note = fmt::format(
      "Estimated, not measured: each launch made while the graph was captured (its ranges below "
      "those around the whole capture) is matched with an eager kernel launched in the same "
      "ranges of an eager run of the step (a host range holding about as many eager launches, "
      "aligned as a sequence of range paths); Est. GPU/replay = the matched eager kernels' "
      "durations, averaged over the eager runs that match best (as a node-traced replay's GPU "
      "time is its kernels' summed durations); Share = of the graph's matched kernel time.{} "
      "{} of {} rows shown.",
      per_graph, shown, rows);
  return true;
}

}  // namespace sightline
