#include "analyses/cuda_graphs/cuda_graphs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "analyses/cuda_graphs/graph_step_batches.h"
#include "facts/graph_alignment.h"
#include "facts/graph_kernel_paths.h"
#include "facts/graph_replays.h"
#include "facts/launch_projection.h"
#include "facts/whole_graph_estimate.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

// The same step run eagerly: for each capture path ("capture > layer_0 > attention"), the ranges
// of the same names below another outermost range ("eager_step_7 > layer_0 > attention"), and
// the kernels launched inside each of them.
// `reference_rows`: the rows attributed with the eager reference, whose eager runs are `trace`, the
// reference; else the other rows, with `trace` the analysed one.
void AddEagerCounterparts(const Trace& trace, const std::set<int32_t>& capture_roots,
                          bool reference_rows, CudaGraphsResult& out) {
  const RangeTable& r = trace.ranges;
  // Path without its outermost range -> the rows of that path (captured and aligned).
  std::map<std::string, std::vector<CaptureRangeRow*>> wanted;
  for (CaptureRangeRow& row : out.rows) {
    if (row.reference != reference_rows) continue;
    if (row.aligned) {  // the path is already the one below the eager run's outermost range
      wanted[row.path].push_back(&row);
      continue;
    }
    const size_t cut = row.path.find(" > ");
    if (cut != std::string::npos) wanted[row.path.substr(cut + 3)].push_back(&row);
  }
  if (wanted.empty()) return;
  struct Eager {
    int64_t instances = 0, kernels = 0;
    DurationNs gpu_ns = 0;
  };
  std::map<CaptureRangeRow*, Eager> eager;
  const LaunchIndex index(trace);
  constexpr int kMaxDepth = 64;  // deeper paths are not matched (nesting work stays linear)
  std::vector<std::string_view> names;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!IsCaptureRangeKind(r.kind[i]) || r.depth[i] == 0 || r.depth[i] > kMaxDepth) continue;
    names.clear();
    int32_t root = kNoRow;
    for (int32_t row = static_cast<int32_t>(i); row != kNoRow; row = r.parent[row]) {
      if (!IsCaptureRangeKind(r.kind[row])) continue;
      names.push_back(trace.str(r.name[row]));
      root = row;
    }
    if (root == kNoRow || capture_roots.count(root) > 0 || names.size() < 2) continue;
    std::string key;
    for (size_t n = names.size() - 1; n-- > 0;) {  // without the outermost
      if (!key.empty()) key += " > ";
      key += names[n];
    }
    auto w = wanted.find(key);
    if (w == wanted.end()) continue;
    Eager one;
    one.instances = 1;
    const int32_t thread = index.ThreadOf(r.pid[i], r.tid[i]);
    for (uint32_t work : index.LaunchedIn(thread, r.start_ns[i], r.end_ns[i])) {
      if (!index.IsKernel(work)) continue;
      ++one.kernels;
      one.gpu_ns += trace.kernels.dur_ns(work);
    }
    // A run that launched no kernel is not the step run eagerly: a capture launches none (when
    // the trace has no capture points to say which range captured), nor work outside the window.
    if (one.kernels == 0) continue;
    for (CaptureRangeRow* row : w->second) {
      Eager& e = eager[row];
      e.instances += one.instances;
      e.kernels += one.kernels;
      e.gpu_ns += one.gpu_ns;
    }
  }
  for (auto& [row, e] : eager) {
    row->eager_instances = e.instances;
    row->eager_kernels_per_instance =
        static_cast<double>(e.kernels) / static_cast<double>(e.instances);
    row->eager_per_instance_ns =
        static_cast<DurationNs>(static_cast<double>(e.gpu_ns) / static_cast<double>(e.instances));
  }
}

// The chart of a graph step: GPU time per replay of each range path, in the order the program
// captured (or ran eagerly) them, so that layer_0 > attention, layer_0 > mlp, layer_1 > ... read
// down the page. At most kMaxBars, the largest by GPU time; the outermost range is left out of
// the labels when every row has it (the capture's own range).
void AddPerReplayChart(const CudaGraphsResult& g, Section& s) {
  constexpr size_t kMaxBars = 64;
  std::vector<const CaptureRangeRow*> rows;
  for (const CaptureRangeRow& row : g.rows) {  // largest first
    if (rows.size() == kMaxBars) break;
    if (row.replays > 0) rows.push_back(&row);
  }
  if (rows.size() < 2) return;
  std::stable_sort(
      rows.begin(), rows.end(),
      [](const CaptureRangeRow* a, const CaptureRangeRow* b) { return a->first_ns < b->first_ns; });
  const std::string root = rows.front()->path.substr(0, rows.front()->path.find(" > "));
  bool common = true;
  for (const CaptureRangeRow* row : rows) {
    common = common && row->path.starts_with(root) &&
             (row->path.size() == root.size() || row->path.compare(root.size(), 3, " > ") == 0);
  }
  Series& se = s.series.emplace_back();
  se.key = "per_replay_by_range";
  se.title = "GPU time per replay, by the ranges the kernels were captured in";
  se.y_unit = Unit::kDurationNs;
  for (const CaptureRangeRow* row : rows) {
    std::string label = row->path;
    if (common) {
      label =
          label.size() > root.size() ? label.substr(root.size() + 3) : root + " (no inner range)";
    }
    if (label.size() > 30) label = "..." + label.substr(label.size() - 27);  // the innermost
    se.x.push_back(static_cast<double>(se.x.size()));
    se.y.push_back(static_cast<double>(row->per_replay_ns));
    se.labels.push_back(std::move(label));
  }
}

}  // namespace

int64_t CountGraphLaunches(const Trace& trace) {
  // One launch is a runtime call and the driver call inside it, with one correlation id.
  std::vector<int64_t> ids;
  const ApiCallTable& a = trace.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (trace.str(a.name[i]).find("GraphLaunch") == std::string_view::npos) continue;
    ids.push_back(a.correlation[i] >= 0 ? a.correlation[i] : -static_cast<int64_t>(i) - 2);
  }
  std::sort(ids.begin(), ids.end());
  return std::unique(ids.begin(), ids.end()) - ids.begin();
}

CudaGraphsResult ComputeCudaGraphs(const Trace& trace) {
  return ComputeCudaGraphs(trace, ComputeGraphKernelPaths(trace));
}

CudaGraphsResult ComputeCudaGraphs(const Trace& trace, const GraphKernelPaths& gp,
                                   const Trace* eager_reference, const KernelGraphs* graphs) {
  CudaGraphsResult out;
  const KernelTable& k = trace.kernels;
  const GraphAlignment& alignment = gp.alignment;
  const GraphAlignment& by_reference = gp.reference_alignment;
  struct Acc {
    std::map<int64_t, int> nodes;  // original node (aligned: its eager counterpart) -> seen
    std::set<int64_t> replays;     // launching calls, else correlations (reference rows)
    int64_t kernels = 0;
    DurationNs gpu_ns = 0;
    TimeNs first_ns = INT64_MAX;
  };
  // (source, path, graph): the graph only for kernels captured under no range, where nothing
  // else tells two graphs apart (-1 otherwise).
  std::map<std::tuple<PathSource, std::string, int32_t>, Acc> by_path;
  out.graph_launches = CountGraphLaunches(trace);
  out.replays_to_align = alignment.replays;
  out.replays_aligned = alignment.replays_matched;
  out.sequences_cut = alignment.sequences_cut + by_reference.sequences_cut;
  out.reference_given = eager_reference != nullptr;
  out.replays_to_reference = by_reference.replays;
  out.replays_by_reference = by_reference.replays_matched;
  out.reference_unmatched = by_reference.kernels - by_reference.kernels_matched;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!gp.graph[i]) continue;
    ++out.graph_kernels;
    const DurationNs d = k.dur_ns(i);
    out.graph_gpu_ns += d;
    int64_t node = k.capture_node[i];
    TimeNs point = k.capture_ns[i];
    if (gp.source[i] == PathSource::kCapture) {
      ++out.with_capture;
    } else if (gp.source[i] == PathSource::kAligned) {
      ++out.aligned;
      node = -1 - static_cast<int64_t>(alignment.counterpart[i]);  // apart from real node ids
      const int32_t call = k.launch_call[alignment.counterpart[i]];
      point = call != kNoRow ? trace.api_calls.start_ns[call] : INT64_MAX;
    } else if (gp.source[i] == PathSource::kReference) {
      ++out.by_reference;
      node = -1 - static_cast<int64_t>(by_reference.counterpart[i]);
      // The reference's clock orders the rows among themselves (they are rows of their own).
      const int32_t call = eager_reference != nullptr
                               ? eager_reference->kernels.launch_call[by_reference.counterpart[i]]
                               : kNoRow;
      point = call != kNoRow ? eager_reference->api_calls.start_ns[call] : INT64_MAX;
    } else {
      continue;
    }
    const std::string& path = gp.paths[gp.path[i]];
    if (!path.empty()) {
      ++out.in_ranges;
      out.in_ranges_gpu_ns += d;
    }
    const int32_t graph = path.empty() && gp.source[i] == PathSource::kCapture &&
                                  graphs != nullptr && i < graphs->of_kernel.size()
                              ? graphs->of_kernel[i]
                              : -1;
    Acc& acc = by_path[{gp.source[i], path.empty() ? std::string("(no range open)") : path, graph}];
    acc.nodes[node] = 1;
    if (gp.source[i] == PathSource::kReference) {
      // A replay is a launching call, else a correlation id (as the alignment groups them).
      acc.replays.insert(k.launch_call[i] != kNoRow ? int64_t{k.launch_call[i]}
                                                    : (int64_t{1} << 40) + k.correlation[i]);
    }
    ++acc.kernels;
    acc.gpu_ns += d;
    acc.first_ns = std::min(acc.first_ns, point);
  }
  std::map<std::pair<PathSource, std::string>, int> graphs_per_path;
  for (const auto& [key, a] : by_path) ++graphs_per_path[{std::get<0>(key), std::get<1>(key)}];
  for (auto& [key, a] : by_path) {
    const auto& [source, path, graph] = key;
    CaptureRangeRow& row = out.rows.emplace_back();
    row.aligned = source != PathSource::kCapture;
    row.reference = source == PathSource::kReference;
    row.path = path;
    if (graphs_per_path[{source, path}] > 1 && graph >= 0 &&
        static_cast<size_t>(graph) < graphs->labels.size()) {
      row.path = graphs->labels[graph];  // "graph 2 (279 kernels)": captured under no range
    }
    row.first_ns = a.first_ns;
    row.nodes = static_cast<int64_t>(a.nodes.size());
    if (row.reference) {
      row.nodes = static_cast<int64_t>(
          std::llround(static_cast<double>(a.kernels) / static_cast<double>(a.replays.size())));
    }
    row.kernels = a.kernels;
    row.gpu_ns = a.gpu_ns;
    row.replays = row.reference   ? static_cast<double>(a.replays.size())
                  : row.nodes > 0 ? static_cast<double>(a.kernels) / static_cast<double>(row.nodes)
                                  : 0;
    row.per_replay_ns =
        row.replays > 0 ? static_cast<DurationNs>(static_cast<double>(a.gpu_ns) / row.replays) : 0;
  }
  AddEagerCounterparts(trace, std::set<int32_t>(gp.capture_roots.begin(), gp.capture_roots.end()),
                       /*reference_rows=*/false, out);
  if (eager_reference != nullptr && out.by_reference > 0) {
    AddEagerCounterparts(*eager_reference, {}, /*reference_rows=*/true, out);
  }
  std::stable_sort(
      out.rows.begin(), out.rows.end(),
      [](const CaptureRangeRow& a, const CaptureRangeRow& b) { return a.gpu_ns > b.gpu_ns; });
  return out;
}

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

// The per-range estimate of whole-graph runs (facts/whole_graph_estimate.h) into `s`: facts, a
// table per graph and one per range when some graph was estimated, notes on what could not be.
// Returns whether a graph was.
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

}  // namespace

Status RunCudaGraphsSection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  // The graph each replayed kernel ran in: through its launching call's replay.
  KernelGraphs kernel_graphs;
  {
    const GraphReplays& replays = context.Replays();
    std::map<int32_t, int32_t> graph_of_call;
    for (const GraphReplay& r : replays.replays) {
      if (r.launch_call != kNoRow) graph_of_call[r.launch_call] = r.variant;
    }
    kernel_graphs.of_kernel.assign(trace.kernels.size(), -1);
    for (size_t i = 0; i < trace.kernels.size(); ++i) {
      const auto it = graph_of_call.find(trace.kernels.launch_call[i]);
      if (it != graph_of_call.end()) kernel_graphs.of_kernel[i] = it->second;
    }
    for (const GraphVariant& v : replays.variants) kernel_graphs.labels.push_back(v.label);
  }
  const CudaGraphsResult g = ComputeCudaGraphs(
      trace, context.GraphPaths(), context.options().eager_reference.get(), &kernel_graphs);
  const int64_t whole = trace.diagnostics.Count(DiagCode::kWholeGraphRuns);
  if (g.graph_kernels == 0 && whole == 0) return Status::Ok();
  if (g.graph_kernels == 0) {
    Section& s = report.AddSection("cuda_graphs",
                                   "CUDA graphs: kernels by the ranges of their capture", input);
    s.AddFact("graph_launches", "Graph launches", g.graph_launches, Unit::kCount);
    s.AddFact("whole_graph_runs", "Graph runs traced as a whole", whole, Unit::kCount);
    const std::string how_to_measure =
        "Profile with --cuda-graph-trace=node, with the capture inside the recorded window, or "
        "record with `sightline record` (node tracing by default; it records where nodes were "
        "captured even before its capture window), to attribute each replayed kernel to the "
        "ranges open when it was captured.";
    const AnalyzeOptions& options = context.options();
    const Trace* reference = options.eager_reference.get();
    const std::string where = reference != nullptr ? fmt::format("the eager reference trace ({})",
                                                                 options.eager_reference_path)
                                                   : std::string("the trace");
    // With an iteration log, each graph's estimate takes the eager runs of its batch size.
    const std::optional<GraphStepBatches> batches = GraphStepBatchesFromLog(context);
    const WholeGraphEstimate estimate =
        EstimateWholeGraphs(trace, reference, batches ? &batches->batches : nullptr);
    if (!AddWholeGraphEstimate(estimate, batches ? &*batches : nullptr, context.options().top_n,
                               s)) {
      s.notes.push_back(fmt::format(
          "The graphs were traced as a whole (nsys's default --cuda-graph-trace=graph): a run is "
          "one row, its kernels are not in the trace, so no time can be given per layer or range "
          "inside it, and no eager run of the captured launches was found in {} to estimate it "
          "from{}. {}",
          where,
          reference != nullptr ? ""
                               : " (a separate eager run of the same program can be given with "
                                 "--eager-reference)",
          how_to_measure));
    } else {
      s.notes.push_back(fmt::format(
          "The graphs were traced as a whole (nsys's default --cuda-graph-trace=graph): the "
          "per-range times above are estimates from the eager runs of {}, not measured. {}",
          where, how_to_measure));
    }
    return Status::Ok();
  }
  Section& s = report.AddSection("cuda_graphs",
                                 "CUDA graphs: kernels by the ranges of their capture", input);
  s.AddFact("graph_launches", "Graph launches", g.graph_launches, Unit::kCount);
  s.AddFact("graph_kernels", "Kernels run from graph nodes", g.graph_kernels, Unit::kCount);
  s.AddFact("graph_gpu_ns", "Their GPU time (sum)", g.graph_gpu_ns, Unit::kDurationNs);
  s.AddFact("with_capture", "Of them with a known capture point", g.with_capture, Unit::kCount);
  s.AddFact("aligned", "Of them matched with an eager run instead", g.aligned, Unit::kCount);
  s.AddFact("attributed_pct", "Attributed to ranges (of graph kernels)",
            100.0 * static_cast<double>(g.in_ranges) / static_cast<double>(g.graph_kernels),
            Unit::kPercent);
  s.AddFact("attributed_gpu_pct", "Attributed, by GPU time",
            g.graph_gpu_ns > 0 ? Value(100.0 * static_cast<double>(g.in_ranges_gpu_ns) /
                                       static_cast<double>(g.graph_gpu_ns))
                               : Value(),
            Unit::kPercent);
  if (g.replays_to_align > 0) {
    s.AddFact("replays_to_align", "Replays without capture points", g.replays_to_align,
              Unit::kCount);
    s.AddFact("replays_aligned", "... matched with an eager run", g.replays_aligned, Unit::kCount);
  }
  if (g.reference_given && g.replays_to_reference > 0) {
    s.AddFact("by_reference", "Of them matched with the eager reference instead", g.by_reference,
              Unit::kCount);
    s.AddFact("by_reference_pct", "Share of graph kernels",
              100.0 * static_cast<double>(g.by_reference) / static_cast<double>(g.graph_kernels),
              Unit::kPercent);
    s.AddFact("replays_to_reference", "Replays left to the eager reference", g.replays_to_reference,
              Unit::kCount);
    s.AddFact("replays_by_reference", "... matched with one of its eager runs",
              g.replays_by_reference, Unit::kCount);
    s.AddFact("reference_unmatched", "Kernels of those replays without a counterpart there",
              g.reference_unmatched, Unit::kCount);
  }
  if (g.reference_given && g.replays_to_reference > 0) {
    s.notes.push_back(fmt::format(
        "{} replays ({} kernels) have neither capture points nor an eager run in this trace. "
        "They were matched with the eager runs of the eager reference trace ({}: the same "
        "program run eagerly, recorded separately; its times are never compared with this "
        "trace's): a replay's kernels, in GPU order, aligned by name with the reference's "
        "kernels in launch order; each matched kernel takes the range path around its "
        "counterpart's launch in the reference, below the ranges holding the whole eager run "
        "(rows marked \"reference\"; their eager columns are the reference's runs). {} replays "
        "matched; {} kernels ({:.1f}% of graph kernels) found a counterpart, {} did not and are "
        "not attributed.",
        g.replays_to_reference, g.by_reference + g.reference_unmatched,
        context.options().eager_reference_path, g.replays_by_reference, g.by_reference,
        100.0 * static_cast<double>(g.by_reference) / static_cast<double>(g.graph_kernels),
        g.reference_unmatched));
  }
  if (g.aligned > 0) {
    s.notes.push_back(fmt::format(
        "{} of {} graph kernels have no capture point (the trace does not say where their nodes "
        "were created: the capture before the recorded window, or a PyTorch profiler trace). "
        "They were matched instead with the same step run eagerly in this trace: the kernels of "
        "a replay, in GPU order, aligned by name with the kernels launched eagerly, in launch "
        "order; each takes the ranges around its eager counterpart below the eager step's own "
        "ranges (rows marked \"aligned\"). {} kernels found a counterpart here, {} did not.",
        g.graph_kernels - g.with_capture, g.graph_kernels, g.aligned,
        g.graph_kernels - g.with_capture - g.aligned));
  }
  if (g.sequences_cut > 0) {
    s.notes.push_back(fmt::format(
        "{} distinct replayed kernel sequences were not aligned: the alignment's bound on work "
        "(4e8 comparisons) was spent on the others; their kernels count as not attributed.",
        g.sequences_cut));
  }
  if (g.with_capture == 0 && g.aligned == 0 && g.by_reference == 0) {
    s.notes.push_back(
        "No graph kernel has a capture point or an eager counterpart, so none can be given to a "
        "range inside the graph: the trace does not say where the graph's nodes were created (a "
        "PyTorch profiler trace gives graph kernels only the cudaGraphLaunch's correlation; nsys "
        "needs --cuda-graph-trace=node; a recording made before `sightline record` wrote graph "
        "node records has none), and no eager run of the same kernels is in it. Profile with "
        "nsys --cuda-graph-trace=node and keep the capture inside the recorded window "
        "(cudaProfilerStart before the graph is captured), record again with `sightline record`, "
        "or run the step eagerly once in the trace; then each replayed kernel is attributed to "
        "the NVTX ranges around its capture or its eager counterpart.");
    return Status::Ok();
  }
  Table& t =
      s.AddTable("by_capture_range", "Graph kernels by the ranges open when they were captured",
                 {{"nodes", "Kernels/replay", Unit::kCount},
                  {"replays", "Replays", Unit::kNumber},
                  {"per_replay_ns", "GPU/replay", Unit::kDurationNs},
                  {"share_pct", "Share", Unit::kPercent},
                  {"eager_runs", "Eager runs", Unit::kCount},
                  {"eager_kernels", "Eager kernels", Unit::kNumber},
                  {"eager_per_run_ns", "Eager GPU/run", Unit::kDurationNs},
                  {"method", "By", Unit::kText},
                  {"path", "Ranges at capture", Unit::kText}});
  const int top = context.options().top_n;
  int shown = 0;
  for (const CaptureRangeRow& row : g.rows) {
    if (shown++ >= std::max(top, 1)) break;
    const bool eager = row.eager_instances > 0;
    t.rows.push_back({row.nodes, row.replays, row.per_replay_ns,
                      g.graph_gpu_ns > 0 ? Value(100.0 * static_cast<double>(row.gpu_ns) /
                                                 static_cast<double>(g.graph_gpu_ns))
                                         : Value(),
                      row.eager_instances, eager ? Value(row.eager_kernels_per_instance) : Value(),
                      eager ? Value(row.eager_per_instance_ns) : Value(),
                      row.reference ? "reference"
                      : row.aligned ? "aligned"
                                    : "capture",
                      row.path});
  }
  AddPerReplayChart(g, s);
  t.note = fmt::format(
      "Each kernel of a replay is counted in the innermost host ranges (NVTX, PyTorch "
      "annotations) that were open on the capturing thread when its graph node was created (By: "
      "capture), or around its eager counterpart (By: aligned), or around its counterpart in the "
      "eager reference trace (By: reference; Kernels/replay = kernels / the replays with one "
      "there); "
      "Replays = kernels / kernels per replay; Share = of all graph kernels' GPU time. Eager: the "
      "ranges of the same names below another "
      "outermost range (the step run without the graph), kernels launched inside each, per run. "
      "Kernels captured under no range are one row per graph when several graphs have them "
      "(named as the graphs: \"graph 2 (279 kernels)\"). {} of {} rows shown.",
      std::min<size_t>(g.rows.size(), static_cast<size_t>(std::max(top, 1))), g.rows.size());
  return Status::Ok();
}

}  // namespace sightline
