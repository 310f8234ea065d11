// Rule outlier_iterations: iterations much slower than the median (the iterations analysis marks
// them), with what differs from a typical iteration: kernel time, kernels that grew, idle time,
// copies. docs/analyses/findings.md, "outlier_iterations".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyses/findings/findings.h"
#include "analyses/findings/outlier_causes.h"

namespace sightline {
namespace {

constexpr size_t kOutlierListed = 8;  // outliers named in `where`

// What grew in the worst outlier, for the title: a measured cause that holds most of the extra time
// is named with its size; otherwise the largest part of the worst outlier's extra time (GPU idle,
// kernel time, copies) names the likely cause.
std::string CauseOf(const OutlierCauses& why, DurationNs d_idle, DurationNs d_kernel,
                    DurationNs d_memop) {
  const OutlierCause& top = why.causes[why.top];
  if (top.ns > 0 && why.Share(top.ns) >= 0.5) {
    return fmt::format("{} {} inside them ({:.0f}% of their extra time)", FormatDuration(top.ns),
                       top.what, 100 * why.Share(top.ns));
  }
  if (d_idle >= d_kernel && d_idle >= d_memop && why.Share(top.ns) >= 0.1) {
    // Part of it measured: name the largest measured cause and what is left, with their sizes
    // (under 10% the measured part says nothing; the possibilities below are listed instead).
    return fmt::format(
        "GPU idle time grew: {} {} ({:.0f}% of their extra time) measured, {} ({:.0f}%) not "
        "covered by a measured cause",
        top.short_name, FormatDuration(top.ns), 100 * why.Share(top.ns),
        FormatDuration(why.unexplained_ns), 100 * why.Share(why.unexplained_ns));
  }
  if (d_idle >= d_kernel && d_idle >= d_memop) {
    return "GPU idle time grew (the host was late: a sync, a stall, garbage collection, "
           "scheduling, a recompilation or lazy module loading)";
  }
  if (d_kernel >= d_memop) {
    return "kernel time grew (different shapes or batch, a slower algorithm, a first-call "
           "autotune, clocks or contention)";
  }
  return "copy time grew (extra or larger transfers)";
}

// The fix for a cause that holds most of the extra time (GC, GIL wait, OS waits), else where to
// look.
const char* RecommendationFor(const OutlierCauses& why) {
  const OutlierCause& top = why.causes[why.top];
  const bool named = top.ns > 0 && why.Share(top.ns) >= 0.5;
  if (named && why.top == OutlierCauses::kGc) {
    return "Keep the garbage collector out of the loop: gc.freeze() after warm-up (what "
           "TensorRT-LLM and vLLM do), raise the generation-0 threshold (gc.set_threshold), or "
           "gc.disable() in the loop and collect between requests; fewer short-lived Python "
           "objects per step (reference cycles above all) make each collection shorter.";
  }
  if (named && why.top == OutlierCauses::kGilWait) {
    return "Another thread held the GIL when the loop needed it: see the threads section for who "
           "held it; move that work (response handling, detokenization, logging) to another "
           "process or batch it every N iterations.";
  }
  if (named && why.top == OutlierCauses::kOsWait) {
    return "The loop thread waited in the OS (see the threads section's OS calls): poll without "
           "blocking or from another thread, and keep file and network I/O off the loop.";
  }
  return "Look at the worst iteration on the timeline against a typical one. Warm-up iterations "
         "(autotuning, lazy module loading, graph capture, allocator growth) belong before the "
         "measured window; recurring stalls point at Python garbage collection (gc.freeze(), "
         "gc.disable() in the loop), host-side scheduling or synchronization; kernels that grew "
         "point at changed shapes or batch composition. The hot Python frames of the outliers "
         "(with --python-sampling) show what the host did instead.";
}

// The slowest outliers (at most kOutlierListed): "12 (80 ms, 4.1x, at 1.2 s), ...".
std::string ListOutliers(const Trace& trace, std::vector<const Iteration*> by_wall, double median) {
  std::string list;
  std::sort(by_wall.begin(), by_wall.end(),
            [](const Iteration* a, const Iteration* b) { return a->wall_ns() > b->wall_ns(); });
  for (size_t i = 0; i < std::min(kOutlierListed, by_wall.size()); ++i) {
    const Iteration* it = by_wall[i];
    list += fmt::format("{}{} ({}, {:.1f}x, at {})", i ? ", " : "", it->index,
                        FormatDuration(it->wall_ns()), median > 0 ? it->wall_ns() / median : 0.0,
                        FormatDuration(it->start_ns - trace.begin_ns()));
  }
  if (by_wall.size() > kOutlierListed)
    list += fmt::format(", and {} more", by_wall.size() - kOutlierListed);
  return list;
}

}  // namespace

Status RuleOutlierIterations(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  const IterationSet* set = c.loop().MainSet();
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

  const std::string grown = GrownKernels(c, *set, *typical, *worst);
  const OutlierCauses why = MeasureOutlierCauses(c, *set, *typical, outliers, excess);

  Finding f;
  f.id = "outlier_iterations";
  f.severity = excess >= 0.1 * set->wall.total ? Severity::kHigh : Severity::kMedium;
  f.title =
      fmt::format("{} outlier iteration{}: the worst takes {:.1f}x the median; {}", outliers.size(),
                  outliers.size() == 1 ? "" : "s", median > 0 ? worst->wall_ns() / median : 0.0,
                  CauseOf(why, d_idle, d_kernel, d_memop));
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
  for (const OutlierCause& x : why.causes) {
    if (x.ns > 0 ||
        (x.key == std::string_view("gc_excess_ns") && !c.host().GcIntervals(set->pid).empty())) {
      f.evidence.push_back({x.key, x.label, x.ns, Unit::kDurationNs});
    }
  }
  if (!c.host().GcIntervals(set->pid).empty()) {
    f.evidence.push_back({"gc_share_pct", "GC's share of their extra time",
                          100.0 * why.Share(why.causes[OutlierCauses::kGc].ns), Unit::kPercent});
  }
  f.evidence.push_back({"unexplained_ns", "Extra time no measured cause covers", why.unexplained_ns,
                        Unit::kDurationNs});
  f.evidence.push_back({"attribution", "Their extra time", why.attribution});
  if (!why.hot_frames.empty()) {
    f.evidence.push_back(
        {"hot_frames", "Hot Python frames of the unexplained part", why.hot_frames});
  }

  f.where = fmt::format("iterations of '{}' (thread {}:{}): {}", set->pattern, set->pid, set->tid,
                        ListOutliers(trace, outliers, median));
  f.recommendation = RecommendationFor(why);
  f.estimated_savings_ns = excess;
  for (const Iteration* it : outliers) f.AddSpan(it->start_ns, it->end_ns);
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
