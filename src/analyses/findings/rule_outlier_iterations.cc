// Rule outlier_iterations: iterations much slower than the median (the iterations analysis marks
// them), with what differs from a typical iteration: kernel time, kernels that grew, idle time,
// copies. docs/analyses/findings.md, "outlier_iterations".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analyses/findings/findings.h"
#include "analyses/intervals.h"
#include "analyses/launch_projection.h"
#include "analyses/threads.h"

namespace sightline {
namespace {

constexpr size_t kListed = 8;  // outliers named in `where`

// Kernel time per short name launched from `thread` in [a, b).
std::unordered_map<StringId, DurationNs> KernelTimeByName(const Trace& trace,
                                                          const LaunchIndex& index, int32_t thread,
                                                          TimeNs a, TimeNs b) {
  std::unordered_map<StringId, DurationNs> out;
  if (thread < 0) return out;
  for (uint32_t work : index.LaunchedIn(thread, a, b)) {
    if (index.IsKernel(work)) out[trace.kernels.short_name[work]] += trace.kernels.dur_ns(work);
  }
  return out;
}

}  // namespace

Status RuleOutlierIterations(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  const IterationSet* set = c.MainSet();
  if (set == nullptr || set->outliers == 0) return Status::Ok();
  const double median = set->wall.median;

  // A typical iteration: the non-outlier whose wall time is closest to the median.
  const Iteration* typical = nullptr;
  std::vector<const Iteration*> outliers;
  for (const Iteration& it : set->iterations) {
    if (it.outlier) {
      outliers.push_back(&it);
    } else if (typical == nullptr ||
               std::abs(it.wall_ns() - median) < std::abs(typical->wall_ns() - median)) {
      typical = &it;
    }
  }
  if (typical == nullptr || outliers.empty()) return Status::Ok();

  DurationNs excess = 0;
  for (const Iteration* it : outliers) excess += it->wall_ns() - static_cast<DurationNs>(median);
  const Iteration* worst = *std::max_element(
      outliers.begin(), outliers.end(),
      [](const Iteration* a, const Iteration* b) { return a->wall_ns() < b->wall_ns(); });

  // What differs in the worst outlier, against the typical iteration.
  auto idle = [](const Iteration& it) { return it.wall_ns() - it.gpu_busy_in_window_ns; };
  const DurationNs d_wall = worst->wall_ns() - typical->wall_ns();
  const DurationNs d_kernel = worst->launched.kernel_time_ns - typical->launched.kernel_time_ns;
  const DurationNs d_memop = worst->launched.memop_time_ns - typical->launched.memop_time_ns;
  const DurationNs d_idle = idle(*worst) - idle(*typical);

  const LaunchIndex& index = c.Launches();
  const int32_t thread = index.ThreadOf(set->pid, set->tid);
  auto before = KernelTimeByName(trace, index, thread, typical->start_ns, typical->end_ns);
  auto after = KernelTimeByName(trace, index, thread, worst->start_ns, worst->end_ns);
  std::vector<std::pair<DurationNs, StringId>> grew;
  for (const auto& [name, t] : after) {
    auto b = before.find(name);
    const DurationNs d = t - (b == before.end() ? 0 : b->second);
    if (d > 0) grew.push_back({d, name});
  }
  std::sort(grew.begin(), grew.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string grown;
  for (size_t i = 0; i < std::min<size_t>(3, grew.size()); ++i) {
    grown +=
        fmt::format("{}{} +{}{}", i ? ", " : "", trace.str(grew[i].second),
                    FormatDuration(grew[i].first), before.count(grew[i].second) ? "" : " (new)");
  }

  // Measured causes over all outliers, each against the typical iteration (docs/metrics.md, "Host
  // waits"): garbage collection (the GC ranges of the loop's process), the launching thread's GIL
  // wait and OS waits, host-blocking CUDA calls (synchronize, blocking copies), and kernel time.
  // What they do not cover is left "unexplained", with its size.
  const HostBreakdown base = c.HostWithin(set->pid, set->tid, typical->start_ns, typical->end_ns);
  DurationNs gc_excess = 0, sync_excess = 0, gil_excess = 0, os_excess = 0, kernel_excess = 0;
  std::vector<Interval> outlier_spans;
  for (const Iteration* it : outliers) {
    const HostBreakdown h = c.HostWithin(set->pid, set->tid, it->start_ns, it->end_ns);
    gc_excess += std::max<DurationNs>(0, h.gc_ns - base.gc_ns);
    sync_excess += std::max<DurationNs>(0, h.sync_ns - base.sync_ns);
    gil_excess += std::max<DurationNs>(0, h.gil_wait_ns - base.gil_wait_ns);
    os_excess += std::max<DurationNs>(0, h.os_wait_ns - base.os_wait_ns);
    kernel_excess +=
        std::max<DurationNs>(0, it->launched.kernel_time_ns - typical->launched.kernel_time_ns);
    outlier_spans.push_back({it->start_ns, it->end_ns});
  }
  struct Cause {
    const char* key;
    const char* label;  // evidence label
    const char* what;   // in the title: "<duration> <what> inside them"
    const char* short_name;
    DurationNs ns;
  };
  std::vector<Cause> causes = {
      {"gc_excess_ns", "Extra garbage collection in the outliers", "of garbage collection", "GC",
       gc_excess},
      {"gil_excess_ns", "Extra GIL wait of the launching thread",
       "of the launching thread waiting for the GIL", "GIL wait", gil_excess},
      {"os_wait_excess_ns", "Extra OS waits of the launching thread",
       "of the launching thread waiting in OS calls", "OS waits", os_excess},
      {"sync_excess_ns", "Extra host-blocking calls in the outliers",
       "more of the host blocked in synchronize and blocking copy calls", "blocking CUDA calls",
       sync_excess},
      {"kernel_excess_ns", "Extra kernel time in the outliers", "more kernel time", "kernel time",
       kernel_excess},
  };
  DurationNs explained = 0;
  for (const Cause& x : causes) explained += x.ns;
  const DurationNs unexplained = std::max<DurationNs>(0, excess - explained);
  const Cause* top = &causes[0];
  for (const Cause& x : causes) {
    if (x.ns > top->ns) top = &x;
  }
  auto share_of = [&](DurationNs t) { return excess > 0 ? static_cast<double>(t) / excess : 0; };
  const double gc_share = share_of(gc_excess);
  std::string attribution;
  for (const Cause& x : causes) {
    if (x.ns <= 0) continue;
    attribution += fmt::format("{}{} {} ({:.0f}%)", attribution.empty() ? "" : ", ", x.short_name,
                               FormatDuration(x.ns), 100 * share_of(x.ns));
  }
  attribution += fmt::format("{}unexplained {} ({:.0f}%)", attribution.empty() ? "" : "; ",
                             FormatDuration(unexplained), 100 * share_of(unexplained));
  std::string frames;
  if (trace.py_samples.size() > 0) {
    // The samples of the unexplained part: the outliers minus the measured waits.
    std::vector<Interval> measured = c.GcIntervals(set->pid);
    const std::vector<Interval>& gil = c.GilWaited(set->pid, set->tid);
    const std::vector<Interval>& os = c.Waits(set->pid, set->tid).os_wait;
    measured.insert(measured.end(), gil.begin(), gil.end());
    measured.insert(measured.end(), os.begin(), os.end());
    frames = HotFrames(
        trace, set->pid, set->tid,
        SubtractIntervals(MergeIntervals(outlier_spans), MergeIntervals(std::move(measured))), 3);
  }

  // A measured cause that holds most of the extra time is named with its size; otherwise the
  // largest share of the worst outlier's extra time names the likely cause.
  std::string cause;
  if (top->ns > 0 && share_of(top->ns) >= 0.5) {  // `named` below
    cause = fmt::format("{} {} inside them ({:.0f}% of their extra time)", FormatDuration(top->ns),
                        top->what, 100 * share_of(top->ns));
  } else if (d_idle >= d_kernel && d_idle >= d_memop && share_of(top->ns) >= 0.1) {
    // Part of it measured: name the largest measured cause and what is left, with their sizes
    // (under 10% the measured part says nothing; the possibilities below are listed instead).
    cause = fmt::format(
        "GPU idle time grew: {} {} ({:.0f}% of their extra time) measured, {} ({:.0f}%) not "
        "covered by a measured cause",
        top->short_name, FormatDuration(top->ns), 100 * share_of(top->ns),
        FormatDuration(unexplained), 100 * share_of(unexplained));
  } else if (d_idle >= d_kernel && d_idle >= d_memop) {
    cause =
        "GPU idle time grew (the host was late: a sync, a stall, garbage collection, "
        "scheduling, a recompilation or lazy module loading)";
  } else if (d_kernel >= d_memop) {
    cause =
        "kernel time grew (different shapes or batch, a slower algorithm, a first-call "
        "autotune, clocks or contention)";
  } else {
    cause = "copy time grew (extra or larger transfers)";
  }

  Finding f;
  f.id = "outlier_iterations";
  f.severity = excess >= 0.1 * set->wall.total ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format("{} outlier iteration{}: the worst takes {:.1f}x the median; {}",
                        outliers.size(), outliers.size() == 1 ? "" : "s",
                        median > 0 ? worst->wall_ns() / median : 0.0, cause);
  f.evidence.push_back(
      {"outliers", "Outlier iterations", static_cast<int64_t>(outliers.size()), Unit::kCount});
  f.evidence.push_back(
      {"iterations", "Iterations", static_cast<int64_t>(set->iterations.size()), Unit::kCount});
  f.evidence.push_back(
      {"median_wall_ns", "Median iteration", static_cast<int64_t>(median), Unit::kDurationNs});
  f.evidence.push_back({"threshold_ns", "Outlier threshold",
                        static_cast<int64_t>(set->outlier_threshold_ns), Unit::kDurationNs});
  f.evidence.push_back({"worst_iteration", "Worst iteration", worst->index, Unit::kCount});
  f.evidence.push_back(
      {"worst_wall_ns", "Worst iteration wall", worst->wall_ns(), Unit::kDurationNs});
  f.evidence.push_back(
      {"typical_iteration", "Compared with iteration", typical->index, Unit::kCount});
  f.evidence.push_back({"delta_wall_ns", "Extra wall time", d_wall, Unit::kDurationNs});
  f.evidence.push_back({"delta_kernel_ns", "Extra kernel time", d_kernel, Unit::kDurationNs});
  f.evidence.push_back({"delta_idle_ns", "Extra GPU idle", d_idle, Unit::kDurationNs});
  f.evidence.push_back({"delta_memop_ns", "Extra copy/set time", d_memop, Unit::kDurationNs});
  f.evidence.push_back({"delta_kernels", "Extra kernels",
                        worst->launched.kernel_count - typical->launched.kernel_count,
                        Unit::kCount});
  f.evidence.push_back({"delta_memops", "Extra copies/sets",
                        worst->launched.memop_count - typical->launched.memop_count, Unit::kCount});
  if (!grown.empty()) f.evidence.push_back({"kernels_grown", "Kernels that grew", grown});
  for (const Cause& x : causes) {
    if (x.ns > 0 ||
        (x.key == std::string_view("gc_excess_ns") && !c.GcIntervals(set->pid).empty())) {
      f.evidence.push_back({x.key, x.label, x.ns, Unit::kDurationNs});
    }
  }
  if (!c.GcIntervals(set->pid).empty()) {
    f.evidence.push_back(
        {"gc_share_pct", "GC's share of their extra time", 100.0 * gc_share, Unit::kPercent});
  }
  f.evidence.push_back(
      {"unexplained_ns", "Extra time no measured cause covers", unexplained, Unit::kDurationNs});
  f.evidence.push_back({"attribution", "Their extra time", attribution});
  if (!frames.empty()) {
    f.evidence.push_back({"hot_frames", "Hot Python frames of the unexplained part", frames});
  }

  std::string list;
  std::vector<const Iteration*> by_wall = outliers;
  std::sort(by_wall.begin(), by_wall.end(),
            [](const Iteration* a, const Iteration* b) { return a->wall_ns() > b->wall_ns(); });
  for (size_t i = 0; i < std::min(kListed, by_wall.size()); ++i) {
    const Iteration* it = by_wall[i];
    list += fmt::format("{}{} ({}, {:.1f}x, at {})", i ? ", " : "", it->index,
                        FormatDuration(it->wall_ns()), median > 0 ? it->wall_ns() / median : 0.0,
                        FormatDuration(it->start_ns - trace.begin_ns()));
  }
  if (by_wall.size() > kListed) list += fmt::format(", and {} more", by_wall.size() - kListed);
  f.where =
      fmt::format("iterations of '{}' (thread {}:{}): {}", set->pattern, set->pid, set->tid, list);
  const bool named = top->ns > 0 && share_of(top->ns) >= 0.5;
  if (named && top == &causes[0]) {
    f.recommendation =
        "Keep the garbage collector out of the loop: gc.freeze() after warm-up (what TensorRT-LLM "
        "and vLLM do), raise the generation-0 threshold (gc.set_threshold), or gc.disable() in the "
        "loop and collect between requests; fewer short-lived Python objects per step (reference "
        "cycles above all) make each collection shorter.";
  } else if (named && top == &causes[1]) {
    f.recommendation =
        "Another thread held the GIL when the loop needed it: see the threads section for who "
        "held it; move that work (response handling, detokenization, logging) to another process "
        "or batch it every N iterations.";
  } else if (named && top == &causes[2]) {
    f.recommendation =
        "The loop thread waited in the OS (see the threads section's OS calls): poll without "
        "blocking or from another thread, and keep file and network I/O off the loop.";
  } else {
    f.recommendation =
        "Look at the worst iteration on the timeline against a typical one. Warm-up iterations "
        "(autotuning, lazy module loading, graph capture, allocator growth) belong before the "
        "measured window; recurring stalls point at Python garbage collection (gc.freeze(), "
        "gc.disable() in the loop), host-side scheduling or synchronization; kernels that grew "
        "point at changed shapes or batch composition. The hot Python frames of the outliers "
        "(with --python-sampling) show what the host did instead.";
  }
  f.estimated_savings_ns = excess;
  for (const Iteration* it : outliers) f.AddSpan(it->start_ns, it->end_ns);
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
