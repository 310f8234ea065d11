// Rule launch_bound: the GPU idles between many short kernels while the host launches them, the
// signature of a loop that CUDA graphs (or fewer, fused launches) would speed up.
// docs/analyses/findings.md, "launch_bound".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyses/cuda_graphs/cuda_graphs.h"
#include "analyses/findings/findings.h"
#include "base/stats.h"
#include "facts/graph_kernel_paths.h"
#include "facts/graph_replays.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

constexpr int64_t kMinKernelsPerWindow = 20;     // fewer launches: launch cost cannot dominate
constexpr DurationNs kMaxMeanKernelNs = 20'000;  // "short" kernels
constexpr double kMaxBusyFraction = 0.5;         // GPU busy under half of the loop's time
constexpr DurationNs kGraphGapNs = 1'000;        // gap left between kernels of a graph
constexpr double kLaunchBoundMinSaving = 0.05;   // of the windows' wall time

struct WindowStats {
  size_t window = 0;
  int64_t kernels = 0;
  DurationNs kernel_time_ns = 0;
  DurationNs busy_ns = 0;
  DurationNs launch_api_ns = 0;
  DurationNs recoverable_ns = 0;
  int64_t gaps = 0;
};

}  // namespace

Status RuleLaunchBound(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  LoopFacts& loop = c.loop();
  if (loop.Windows().empty()) return Status::Ok();
  std::vector<WindowStats> stats(loop.Windows().size());
  const auto& k = trace.kernels;

  // Kernels, kernel time and GPU span of each window: launched work for iterations, the device's
  // kernels for whole-trace windows.
  std::vector<TimeNs> span_begin(loop.Windows().size()), span_end(loop.Windows().size());
  for (size_t w = 0; w < loop.Windows().size(); ++w) {
    const LoopWindow& win = loop.Windows()[w];
    stats[w].window = w;
    if (win.it != nullptr) {
      stats[w].kernels = win.it->launched.kernel_count;
      stats[w].kernel_time_ns = win.it->launched.kernel_time_ns;
      stats[w].busy_ns = win.it->gpu_busy_in_window_ns;
      span_begin[w] = win.it->launched.first_start_ns;
      span_end[w] = win.it->launched.last_end_ns;
    } else {
      for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] != win.device) continue;
        ++stats[w].kernels;
        stats[w].kernel_time_ns += k.dur_ns(i);
      }
      stats[w].busy_ns = BusyWithin(c.gpu().Busy(win.device), win.start_ns, win.end_ns);
      span_begin[w] = win.start_ns;
      span_end[w] = win.end_ns;
    }
  }

  // Host time in launch calls inside each window (windows are sorted and disjoint for
  // iterations; whole-trace windows are one per device, so the first match is enough).
  const auto& api = trace.api_calls;
  for (size_t r = 0; r < api.size(); ++r) {
    if (api.api_class[r] != ApiClass::kLaunch) continue;
    const int64_t w = loop.FindWindow(api.pid[r], api.start_ns[r]);
    if (w >= 0) stats[w].launch_api_ns += api.dur_ns(r);
  }

  // Kernels replayed from CUDA graphs in each window: a window whose work is mostly graph
  // replays is launch-bound between replays, not between kernels (graph_launch_gaps says so);
  // "capture it in a graph" does not apply to it.
  std::vector<int64_t> graph_kernels(loop.Windows().size(), 0);
  for (const GraphReplay& g : c.graphs().Replays().replays) {
    if (g.launch_ns < 0) continue;
    const int64_t w = loop.FindWindow(g.pid, g.launch_ns);
    if (w >= 0 && loop.Windows()[w].it != nullptr) graph_kernels[w] += g.kernels;
  }
  const std::vector<uint8_t>& graph = c.graphs().GraphPaths().graph;
  for (size_t w = 0; w < loop.Windows().size(); ++w) {
    if (loop.Windows()[w].it != nullptr) continue;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.device[i] == loop.Windows()[w].device &&
          (graph[i] || IsWholeGraphName(trace.str(k.name[i])))) {
        ++graph_kernels[w];
      }
    }
  }

  // Gaps between the window's kernels that no blocking call covers: what graphs would recover,
  // less the small gap a graph still leaves between kernels.
  DurationNs wall = 0, busy = 0, recoverable = 0, launch_api = 0, kernel_time = 0;
  int64_t kernels = 0, qualifying = 0;
  for (size_t w = 0; w < loop.Windows().size(); ++w) {
    const LoopWindow& win = loop.Windows()[w];
    WindowStats& s = stats[w];
    wall += win.end_ns - win.start_ns;
    busy += s.busy_ns;
    kernels += s.kernels;
    kernel_time += s.kernel_time_ns;
    launch_api += s.launch_api_ns;
    if (s.kernels < kMinKernelsPerWindow || span_end[w] <= span_begin[w]) continue;
    if (2 * graph_kernels[w] >= s.kernels) continue;  // already replayed from graphs
    if (s.kernel_time_ns > kMaxMeanKernelNs * s.kernels) continue;
    if (s.busy_ns > kMaxBusyFraction * (win.end_ns - win.start_ns)) continue;
    const std::vector<Interval>& blocking = c.host().BlockingCalls(win.pid);
    for (const Interval& g : GapsWithin(c.gpu().Busy(win.device), span_begin[w], span_end[w])) {
      if (win.pid >= 0 && BusyWithin(blocking, g.start_ns, g.end_ns) > 0) continue;
      if (g.dur_ns() <= kGraphGapNs || g.dur_ns() > kMaxLaunchGapNs) continue;
      s.recoverable_ns += g.dur_ns() - kGraphGapNs;
      ++s.gaps;
    }
    ++qualifying;
  }
  // Bound each window by the median qualifying window: what a steady iteration loses to launches.
  // The excess of slow iterations is the outlier_iterations rule's.
  std::vector<DurationNs> per_window;
  for (const WindowStats& s : stats) {
    if (s.recoverable_ns > 0) per_window.push_back(s.recoverable_ns);
  }
  if (!per_window.empty()) {
    const auto median = static_cast<DurationNs>(std::llround(Median(std::move(per_window))));
    for (WindowStats& s : stats) {
      s.recoverable_ns = std::min(s.recoverable_ns, median);
      recoverable += s.recoverable_ns;
    }
  }
  if (qualifying == 0 || recoverable < kLaunchBoundMinSaving * wall) return Status::Ok();

  Finding f;
  f.id = "launch_bound";
  f.severity = recoverable >= 0.2 * wall ? Severity::kHigh : Severity::kMedium;
  const bool iters = loop.MainSet() != nullptr;
  const int64_t n = static_cast<int64_t>(loop.Windows().size());
  f.title = fmt::format(
      "Launch-bound loop: the GPU is busy {} of the {} while the host launches {} short "
      "kernels per {}",
      Percent(busy, wall), iters ? "iterations" : "trace", kernels / std::max<int64_t>(n, 1),
      iters ? "iteration" : "device");
  f.evidence.push_back({"windows", iters ? "Iterations" : "Devices", n, Unit::kCount});
  f.evidence.push_back({"launch_bound_windows", "Of them launch-bound", qualifying, Unit::kCount});
  f.evidence.push_back({"wall_ns", "Wall time", wall, Unit::kDurationNs});
  f.evidence.push_back({"gpu_busy_ns", "GPU busy", busy, Unit::kDurationNs});
  f.evidence.push_back(
      {"gpu_busy_pct", "GPU busy share", wall > 0 ? 100.0 * busy / wall : 0.0, Unit::kPercent});
  f.evidence.push_back({"kernels", "Kernels", kernels, Unit::kCount});
  f.evidence.push_back({"mean_kernel_ns", "Mean kernel duration",
                        kernels > 0 ? kernel_time / kernels : 0, Unit::kDurationNs});
  f.evidence.push_back(
      {"launch_api_ns", "Host time in launch calls", launch_api, Unit::kDurationNs});
  f.evidence.push_back({"recoverable_idle_ns", "Idle between kernels, no blocking call",
                        recoverable, Unit::kDurationNs});

  // Where: the iteration range and the worst windows.
  std::vector<size_t> order;
  for (size_t w = 0; w < stats.size(); ++w) {
    if (stats[w].recoverable_ns > 0) order.push_back(w);
  }
  for (size_t w : order)
    f.AddSpan(loop.Windows()[w].start_ns, loop.Windows()[w].end_ns, loop.Windows()[w].device);
  f.SortSpans();
  const size_t top = std::min<size_t>(3, order.size());
  std::partial_sort(order.begin(), order.begin() + top, order.end(), [&](size_t a, size_t b) {
    return stats[a].recoverable_ns > stats[b].recoverable_ns;
  });
  std::string worst;
  for (size_t i = 0; i < top; ++i) {
    const LoopWindow& win = loop.Windows()[order[i]];
    worst += fmt::format("{}{} [{}..{}] on device {}: {} idle in {} gaps between {} kernels",
                         i ? "; " : "", loop.WindowLabel(win),
                         FormatDuration(win.start_ns - trace.begin_ns()),
                         FormatDuration(win.end_ns - trace.begin_ns()), win.device,
                         FormatDuration(stats[order[i]].recoverable_ns), stats[order[i]].gaps,
                         stats[order[i]].kernels);
  }
  if (iters) {
    f.where = fmt::format("iterations {}..{} of '{}' (thread {}:{}), {} launch-bound; largest: {}",
                          loop.Windows().front().iteration, loop.Windows().back().iteration,
                          loop.MainSet()->pattern, loop.MainSet()->pid, loop.MainSet()->tid,
                          qualifying, worst);
  } else {
    f.where = fmt::format("no iterations found; {}", worst);
  }
  // A trace that replays CUDA graphs elsewhere: these iterations are the ones that did not (a
  // batch size without a captured graph, an eager fallback, a warm-up), so the advice is to take
  // the graph path here too, not to discover graphs.
  const int64_t graph_launches = CountGraphLaunches(trace);
  if (graph_launches > 0) {
    f.evidence.push_back({"graph_launches", "CUDA graph launches elsewhere in the trace",
                          graph_launches, Unit::kCount});
    f.recommendation = fmt::format(
        "This trace already replays CUDA graphs ({} graph launches; the cuda_graphs section "
        "shows their work per range beside the eager runs), but these iterations run eagerly: "
        "make them take the graph path too (capture a graph for their batch size or shape, or "
        "find why they fall back to eager), or cut the launch count by fusing small kernels.",
        graph_launches);
  } else {
    f.recommendation =
        "Capture the loop body (the decode step) in a CUDA graph and replay it (torch.compile "
        "mode=\"reduce-overhead\" / torch.cuda.CUDAGraph, TensorRT-LLM/vLLM CUDA-graph mode), or "
        "cut the launch count by fusing small kernels; keep the host ahead of the GPU (no "
        "synchronization inside the captured region).";
  }
  f.estimated_savings_ns = recoverable;
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
