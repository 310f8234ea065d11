#include "analyses/cuda_graphs.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analyses/analysis_context.h"
#include "analyses/graph_alignment.h"
#include "analyses/launch_projection.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

bool HostRange(RangeKind k) {
  return k == RangeKind::kNvtxPushPop || k == RangeKind::kNvtxStartEnd ||
         k == RangeKind::kUserAnnotation;
}

int64_t ThreadKey(int32_t pid, int32_t tid) {
  return (static_cast<int64_t>(pid) << 32) | static_cast<uint32_t>(tid);
}

// The same step run eagerly: for each capture path ("capture > layer_0 > attention"), the ranges
// of the same names below another outermost range ("eager_step_7 > layer_0 > attention"), and
// the kernels launched inside each of them.
void AddEagerCounterparts(const Trace& trace, const std::set<int32_t>& capture_roots,
                          CudaGraphsResult& out) {
  const RangeTable& r = trace.ranges;
  // Path without its outermost range -> the rows of that path (captured and aligned).
  std::map<std::string, std::vector<CaptureRangeRow*>> wanted;
  for (CaptureRangeRow& row : out.rows) {
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
    if (!HostRange(r.kind[i]) || r.depth[i] == 0 || r.depth[i] > kMaxDepth) continue;
    names.clear();
    int32_t root = kNoRow;
    for (int32_t row = static_cast<int32_t>(i); row != kNoRow; row = r.parent[row]) {
      if (!HostRange(r.kind[row])) continue;
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
  CudaGraphsResult out;
  const KernelTable& k = trace.kernels;
  const RangeTable& r = trace.ranges;
  // The ranges of each thread, in start order (the table's order).
  std::unordered_map<int64_t, std::vector<int32_t>> by_thread;
  for (size_t i = 0; i < r.size(); ++i) {
    if (HostRange(r.kind[i]))
      by_thread[ThreadKey(r.pid[i], r.tid[i])].push_back(static_cast<int32_t>(i));
  }
  // The path of host ranges open on (pid, tid) at t, outermost first; memoized per point (one
  // per node, however many replays). With `run` (an aligned kernel's eager counterpart), the
  // ranges holding the whole eager run are left out: they are the step, not the kernel's place.
  std::map<std::tuple<int32_t, int32_t, TimeNs, int32_t>, std::string> paths;
  std::set<int32_t> capture_roots;  // outermost ranges open at some capture
  const std::vector<uint8_t> graph = GraphKernelRows(trace);
  const GraphAlignment alignment = AlignGraphKernels(trace, graph);
  auto path_at = [&](int32_t pid, int32_t tid, TimeNs t, int32_t run) -> const std::string& {
    auto [it, inserted] = paths.try_emplace({pid, tid, t, run});
    if (!inserted) return it->second;
    auto th = by_thread.find(ThreadKey(pid, tid));
    if (th == by_thread.end()) return it->second;
    const std::vector<int32_t>& rows = th->second;
    // The last range that starts at or before t; the ranges open at t are it or its ancestors.
    auto at = std::upper_bound(rows.begin(), rows.end(), t,
                               [&](TimeNs v, int32_t row) { return v < r.start_ns[row]; });
    std::vector<std::string_view> names;
    int32_t row = at == rows.begin() ? kNoRow : *(at - 1);
    int32_t root = kNoRow;
    // Walk up: a range that ended before t is not open; its parent may be. Bounded by the depth.
    while (row != kNoRow) {
      const bool whole_run = run >= 0 &&
                             r.start_ns[row] <= alignment.eager_runs[run].first_launch_ns &&
                             r.end_ns[row] > alignment.eager_runs[run].last_launch_ns;
      if (r.end_ns[row] > t && HostRange(r.kind[row]) && !whole_run) {
        names.push_back(trace.str(r.name[row]));
        root = row;
      }
      row = r.parent[row];
    }
    if (root != kNoRow && run < 0) capture_roots.insert(root);
    // A sibling that started later than an ended range may hold t while the last-starting range
    // does not: the walk above covers the ancestors of the last range that started; ranges open
    // at t that started earlier are among them when ranges nest (the usual case).
    std::string p;
    for (auto n = names.rbegin(); n != names.rend(); ++n) {
      if (!p.empty()) p += " > ";
      p += *n;
    }
    it->second = std::move(p);
    return it->second;
  };
  struct Acc {
    std::map<int64_t, int> nodes;  // original node (aligned: its eager counterpart) -> seen
    int64_t kernels = 0;
    DurationNs gpu_ns = 0;
  };
  std::map<std::pair<bool, std::string>, Acc> by_path;  // (aligned, path)
  out.graph_launches = CountGraphLaunches(trace);
  out.replays_to_align = alignment.replays;
  out.replays_aligned = alignment.replays_matched;
  out.sequences_cut = alignment.sequences_cut;
  const ApiCallTable& api = trace.api_calls;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!graph[i]) continue;
    ++out.graph_kernels;
    const DurationNs d = k.dur_ns(i);
    out.graph_gpu_ns += d;
    const std::string* path = nullptr;
    int64_t node = k.capture_node[i];
    const bool aligned = k.capture_ns[i] < 0;
    if (!aligned) {
      ++out.with_capture;
      path = &path_at(k.capture_pid[i], k.capture_tid[i], k.capture_ns[i], -1);
    } else if (!alignment.counterpart.empty() && alignment.counterpart[i] != kNoRow) {
      ++out.aligned;
      const int32_t call = k.launch_call[alignment.counterpart[i]];
      path = &path_at(api.pid[call], api.tid[call], api.start_ns[call], alignment.eager_run[i]);
      node = -1 - static_cast<int64_t>(alignment.counterpart[i]);  // apart from real node ids
    } else {
      continue;
    }
    if (!path->empty()) {
      ++out.in_ranges;
      out.in_ranges_gpu_ns += d;
    }
    Acc& acc = by_path[{aligned, path->empty() ? std::string("(no range open)") : *path}];
    acc.nodes[node] = 1;
    ++acc.kernels;
    acc.gpu_ns += d;
  }
  for (auto& [key, a] : by_path) {
    CaptureRangeRow& row = out.rows.emplace_back();
    row.aligned = key.first;
    row.path = key.second;
    row.nodes = static_cast<int64_t>(a.nodes.size());
    row.kernels = a.kernels;
    row.gpu_ns = a.gpu_ns;
    row.replays =
        row.nodes > 0 ? static_cast<double>(a.kernels) / static_cast<double>(row.nodes) : 0;
    row.per_replay_ns =
        row.replays > 0 ? static_cast<DurationNs>(static_cast<double>(a.gpu_ns) / row.replays) : 0;
  }
  AddEagerCounterparts(trace, capture_roots, out);
  std::stable_sort(
      out.rows.begin(), out.rows.end(),
      [](const CaptureRangeRow& a, const CaptureRangeRow& b) { return a.gpu_ns > b.gpu_ns; });
  return out;
}

Status RunCudaGraphsSection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  const CudaGraphsResult g = ComputeCudaGraphs(trace);
  const int64_t whole = trace.diagnostics.Count(DiagCode::kWholeGraphRuns);
  if (g.graph_kernels == 0 && whole == 0) return Status::Ok();
  if (g.graph_kernels == 0) {
    Section& s = report.AddSection("cuda_graphs",
                                   "CUDA graphs: kernels by the ranges of their capture", input);
    s.AddFact("graph_launches", "Graph launches", g.graph_launches, Unit::kCount);
    s.AddFact("whole_graph_runs", "Graph runs traced as a whole", whole, Unit::kCount);
    s.notes.push_back(
        "The graphs were traced as a whole (nsys's default --cuda-graph-trace=graph): a run is one "
        "row, its kernels are not in the trace, so no time can be given per layer or range inside "
        "it. Profile with --cuda-graph-trace=node, with the capture inside the recorded window, "
        "or record with `sightline record` (node tracing by default; it records where nodes were "
        "captured even before its capture window), to attribute each replayed kernel to the "
        "ranges open when it was captured.");
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
  if (g.aligned > 0) {
    s.notes.push_back(fmt::format(
        "{} of {} graph kernels have no capture point (the trace does not say where their nodes "
        "were created: the capture before the recorded window, or a PyTorch profiler trace). "
        "They were matched instead with the same step run eagerly in this trace: the kernels of "
        "a replay, in GPU order, aligned by name with the kernels launched eagerly, in launch "
        "order; each takes the ranges around its eager counterpart below the eager step's own "
        "ranges (rows marked \"aligned\"). {} kernels found a counterpart, {} did not.",
        g.graph_kernels - g.with_capture, g.graph_kernels, g.aligned,
        g.graph_kernels - g.with_capture - g.aligned));
  }
  if (g.sequences_cut > 0) {
    s.notes.push_back(fmt::format(
        "{} distinct replayed kernel sequences were not aligned: the alignment's bound on work "
        "(4e8 comparisons) was spent on the others; their kernels count as not attributed.",
        g.sequences_cut));
  }
  if (g.with_capture == 0 && g.aligned == 0) {
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
                      row.aligned ? "aligned" : "capture", row.path});
  }
  t.note = fmt::format(
      "Each kernel of a replay is counted in the innermost host ranges (NVTX, PyTorch "
      "annotations) that were open on the capturing thread when its graph node was created (By: "
      "capture), or around its eager counterpart (By: aligned); "
      "Replays = kernels / kernels per replay; Share = of all graph kernels' GPU time. Eager: the "
      "ranges of the same names below another "
      "outermost range (the step run without the graph), kernels launched inside each, per run. "
      "{} of {} rows shown.",
      std::min<size_t>(g.rows.size(), static_cast<size_t>(std::max(top, 1))), g.rows.size());
  return Status::Ok();
}

}  // namespace sightline
