#include "analyses/cuda_graphs.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analyses/analysis_context.h"
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
  std::map<std::string, CaptureRangeRow*> wanted;  // path without its outermost range
  for (CaptureRangeRow& row : out.rows) {
    const size_t cut = row.path.find(" > ");
    if (cut != std::string::npos) wanted[row.path.substr(cut + 3)] = &row;
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
    Eager& e = eager[w->second];
    ++e.instances;
    const int32_t thread = index.ThreadOf(r.pid[i], r.tid[i]);
    for (uint32_t work : index.LaunchedIn(thread, r.start_ns[i], r.end_ns[i])) {
      if (!index.IsKernel(work)) continue;
      ++e.kernels;
      e.gpu_ns += trace.kernels.dur_ns(work);
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
  // The path of host ranges open on (pid, tid) at t, outermost first; memoized per capture point
  // (one per node, however many replays).
  std::map<std::tuple<int32_t, int32_t, TimeNs>, std::string> paths;
  std::set<int32_t> capture_roots;  // outermost ranges open at some capture
  auto path_at = [&](int32_t pid, int32_t tid, TimeNs t) -> const std::string& {
    auto [it, inserted] = paths.try_emplace({pid, tid, t});
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
      if (r.end_ns[row] > t && HostRange(r.kind[row])) {
        names.push_back(trace.str(r.name[row]));
        root = row;
      }
      row = r.parent[row];
    }
    if (root != kNoRow) capture_roots.insert(root);
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
    std::map<int64_t, int> nodes;  // original node -> seen
    int64_t kernels = 0;
    DurationNs gpu_ns = 0;
  };
  std::map<std::string, Acc> by_path;
  // A kernel ran from a graph when it has a node id, or when its launching call is a graph launch
  // (PyTorch profiler traces: no node ids, the correlation of the cudaGraphLaunch).
  std::vector<uint8_t> graph_call(trace.api_calls.size(), 0);
  for (size_t i = 0; i < trace.api_calls.size(); ++i) {
    graph_call[i] =
        trace.str(trace.api_calls.name[i]).find("GraphLaunch") != std::string_view::npos;
  }
  out.graph_launches = CountGraphLaunches(trace);
  for (size_t i = 0; i < k.size(); ++i) {
    const bool from_graph =
        k.graph_node[i] != 0 ||
        (k.launch_call[i] != kNoRow && graph_call[static_cast<size_t>(k.launch_call[i])]);
    // A whole-graph row (graph-mode tracing) is a graph's run, not one of its kernels.
    if (!from_graph || IsWholeGraphName(trace.str(k.name[i]))) continue;
    ++out.graph_kernels;
    const DurationNs d = k.dur_ns(i);
    out.graph_gpu_ns += d;
    if (k.capture_ns[i] < 0) continue;
    ++out.with_capture;
    const std::string& path = path_at(k.capture_pid[i], k.capture_tid[i], k.capture_ns[i]);
    if (!path.empty()) {
      ++out.in_ranges;
      out.in_ranges_gpu_ns += d;
    }
    Acc& a = by_path[path.empty() ? std::string("(no range open)") : path];
    a.nodes[k.capture_node[i]] = 1;
    ++a.kernels;
    a.gpu_ns += d;
  }
  for (auto& [path, a] : by_path) {
    CaptureRangeRow& row = out.rows.emplace_back();
    row.path = path;
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
        "to attribute each replayed kernel to the ranges open when it was captured.");
    return Status::Ok();
  }
  Section& s = report.AddSection("cuda_graphs",
                                 "CUDA graphs: kernels by the ranges of their capture", input);
  s.AddFact("graph_launches", "Graph launches", g.graph_launches, Unit::kCount);
  s.AddFact("graph_kernels", "Kernels run from graph nodes", g.graph_kernels, Unit::kCount);
  s.AddFact("graph_gpu_ns", "Their GPU time (sum)", g.graph_gpu_ns, Unit::kDurationNs);
  s.AddFact("with_capture", "Of them with a known capture point", g.with_capture, Unit::kCount);
  s.AddFact("attributed_pct", "Attributed to ranges open at capture (of graph kernels)",
            100.0 * static_cast<double>(g.in_ranges) / static_cast<double>(g.graph_kernels),
            Unit::kPercent);
  s.AddFact("attributed_gpu_pct", "Attributed, by GPU time",
            g.graph_gpu_ns > 0 ? Value(100.0 * static_cast<double>(g.in_ranges_gpu_ns) /
                                       static_cast<double>(g.graph_gpu_ns))
                               : Value(),
            Unit::kPercent);
  if (g.with_capture == 0) {
    s.notes.push_back(
        "No graph kernel has a capture point, so none can be given to a range inside the graph: "
        "the trace does not say where the graph's nodes were created (a PyTorch profiler trace "
        "gives graph kernels only the cudaGraphLaunch's correlation; nsys needs "
        "--cuda-graph-trace=node). Profile with nsys --cuda-graph-trace=node and keep the "
        "capture inside the recorded window (cudaProfilerStart before the graph is captured); "
        "then each replayed kernel is attributed to the NVTX ranges around its capture.");
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
                      eager ? Value(row.eager_per_instance_ns) : Value(), row.path});
  }
  t.note = fmt::format(
      "Each kernel of a replay is counted in the innermost host ranges (NVTX, PyTorch "
      "annotations) that were open on the capturing thread when its graph node was created; "
      "Replays = kernels / kernels per replay; Share = of all graph kernels' GPU time. Eager: the "
      "ranges of the same names below another "
      "outermost range (the step run without the graph), kernels launched inside each, per run. "
      "{} of {} rows shown.",
      std::min<size_t>(g.rows.size(), static_cast<size_t>(std::max(top, 1))), g.rows.size());
  return Status::Ok();
}

}  // namespace sightline
