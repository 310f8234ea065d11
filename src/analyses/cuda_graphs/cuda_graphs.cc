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
#include "analyses/cuda_graphs/whole_graph_section.h"
#include "facts/graph_alignment.h"
#include "facts/graph_kernel_paths.h"
#include "facts/graph_replays.h"
#include "facts/launch_projection.h"
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

Status RunCudaGraphsSection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  // The graph each replayed kernel ran in: through its launching call's replay.
  KernelGraphs kernel_graphs;
  {
    const GraphReplays& replays = context.graphs().Replays();
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
      trace, context.graphs().GraphPaths(), context.inputs().eager_reference.get(), &kernel_graphs);
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
    const RunInputs& inputs = context.inputs();
    const Trace* reference = inputs.eager_reference.get();
    const std::string where = reference != nullptr ? fmt::format("the eager reference trace ({})",
                                                                 inputs.eager_reference_path)
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
        context.inputs().eager_reference_path, g.replays_by_reference, g.by_reference,
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
