// The "iterations" report section: ComputeIterations's result as facts on the main set, tables of
// sets, iterations and outliers, and per-iteration series. Definitions: docs/metrics.md,
// "Iterations".
#include "analyses/iterations/iterations_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyses/common/analysis_context.h"
#include "analyses/common/percent.h"
#include "analyses/iteration_log/iteration_log_join.h"
#include "facts/iterations.h"

namespace sightline {
namespace {

int64_t Round(double v) { return static_cast<int64_t>(std::llround(v)); }

// The loops side by side: the main set and the other loops of the trace (another step name, or
// inferred steps of another kernel mix: a prefill beside the decode steps), one row each.
void AddLoopsTable(const IterationsResult& r, Section& s) {
  if (r.other_loops.empty() && r.other_steps == 0) return;
  Table& t = s.AddTable("loops", "Loops side by side (the first is the one the findings read)",
                        {{"pid", "pid", Unit::kNumber},
                         {"name", "loop", Unit::kText},
                         {"iterations", "steps", Unit::kCount},
                         {"warmup", "warm-up", Unit::kCount},
                         {"wall_median_ns", "wall median", Unit::kDurationNs},
                         {"gpu_busy_launched_median_ns", "launched busy median", Unit::kDurationNs},
                         {"kernels_median", "kernels median", Unit::kCount},
                         {"outliers", "outliers", Unit::kCount}});
  auto add = [&t](const IterationSet& set) {
    std::vector<int64_t> busy, kernels;
    for (const Iteration& it : set.iterations) {
      if (it.warmup) continue;
      busy.push_back(it.gpu_busy_launched_ns);
      kernels.push_back(it.launched.kernel_count);
    }
    t.rows.push_back({int64_t{set.pid}, set.pattern, static_cast<int64_t>(set.iterations.size()),
                      set.warmup, Round(set.wall.median), Round(ComputeDurationStats(busy).median),
                      Round(ComputeDurationStats(kernels).median), set.outliers});
  };
  add(r.sets[0]);
  for (const IterationSet& loop : r.other_loops) add(loop);
  t.note = "medians over the steps after each loop's warm-up";
  if (r.other_steps > 0) {
    s.notes.push_back(fmt::format(
        "{} more step{} found the same way ({}) ran a kernel mix seen fewer than {} times or under "
        "a quarter of the loop's kernels (set-up before a call's first forward pass, a lone "
        "prefill): in no loop",
        r.other_steps, r.other_steps == 1 ? "" : "s", FormatDuration(r.other_steps_ns),
        kMinOtherLoopIterations));
  }
}

}  // namespace

Status RunIterationsSection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  const AnalyzeOptions& options = context.options();
  ASSIGN_OR_RETURN(const IterationsResult* result, context.loop().Iterations());
  const IterationsResult& r = *result;
  Section& s = report.AddSection("iterations", "Iterations", input);
  if (r.sets.empty()) {
    s.AddFact("iterations", "Iterations", int64_t{0}, Unit::kCount);
    s.notes.push_back(
        r.default_regex
            ? "no iteration ranges found (looked for NVTX/annotation ranges named like "
              "ProfilerStep#N, iteration N, step N, *_step N, [Executor] _forward_step N, "
              "execute_context_...); name your loop's ranges so, or pass --iterations REGEX"
            : fmt::format("no range name fully matches --iterations '{}'", r.regex));
    if (const IterationLogJoin* join = IterationLogJoinOf(context)) {
      AddIterationLogToSection(trace, *join, std::max(options.top_n, 0), s);  // by timestamp
    }
    return Status::Ok();
  }

  const IterationSet& main = r.sets[0];
  const int64_t top_n = std::max(options.top_n, 0);
  DurationNs wall_total = 0, window_busy_total = 0;
  std::vector<int64_t> busy, kernels;
  for (const Iteration& it : main.iterations) {
    wall_total += it.wall_ns();
    window_busy_total += it.gpu_busy_in_window_ns;
    busy.push_back(it.gpu_busy_launched_ns);
    kernels.push_back(it.launched.kernel_count);
  }
  const DurationStats busy_stats = ComputeDurationStats(busy);
  const DurationStats kernel_stats = ComputeDurationStats(kernels);

  s.AddFact("iterations", "Iterations", static_cast<int64_t>(main.iterations.size()), Unit::kCount);
  s.AddFact("name_pattern", "Name", main.pattern);
  if (r.method != "ranges") {
    // No range names a step: say how they were found and how alike they are.
    s.AddFact("found_by", "Found by (no step ranges in the trace)", r.method);
    s.AddFact("alike_pct", "Steps alike (launches within 10% of the median)",
              100.0 * r.regular_share, Unit::kPercent);
  }
  s.AddFact("thread", "Thread (pid/tid)", fmt::format("{}/{}", main.pid, main.tid));
  s.AddFact("wall_median_ns", "Wall time median", Round(main.wall.median), Unit::kDurationNs);
  s.AddFact("wall_mean_ns", "Wall time mean", Round(main.wall.mean), Unit::kDurationNs);
  s.AddFact("wall_p90_ns", "Wall time p90", Round(main.wall.p90), Unit::kDurationNs);
  s.AddFact("wall_p99_ns", "Wall time p99", Round(main.wall.p99), Unit::kDurationNs);
  s.AddFact("wall_min_ns", "Wall time min", main.wall.min, Unit::kDurationNs);
  s.AddFact("wall_max_ns", "Wall time max", main.wall.max, Unit::kDurationNs);
  s.AddFact("wall_mad_ns", "Wall time MAD", Round(main.wall_mad_ns), Unit::kDurationNs);
  s.AddFact("gpu_busy_launched_median_ns", "GPU busy (launched work) median",
            Round(busy_stats.median), Unit::kDurationNs);
  s.AddFact("gpu_busy_in_window_pct", "GPU busy within iterations",
            Pct(static_cast<double>(window_busy_total), static_cast<double>(wall_total)),
            Unit::kPercent);
  s.AddFact("kernels_median", "Kernels per iteration (median)", kernel_stats.median, Unit::kCount);
  if (main.warmup > 0) {
    s.AddFact("warmup", "Warm-up steps (before the steady state; not in the wall-time figures)",
              main.warmup, Unit::kCount);
    s.AddFact("warmup_ns", "Warm-up time", main.warmup_ns, Unit::kDurationNs);
  }
  s.AddFact("outliers", "Outliers", main.outliers, Unit::kCount);
  if (main.outlier_threshold_ns > 0) {
    s.AddFact("outlier_threshold_ns", "Outlier above", Round(main.outlier_threshold_ns),
              Unit::kDurationNs);
  }

  const bool several = r.sets.size() > 1;
  if (several) {
    Table& sets = s.AddTable("sets", "Iteration sets (one per process)",
                             {{"pid", "pid", Unit::kNumber},
                              {"tid", "tid", Unit::kNumber},
                              {"name", "name", Unit::kText},
                              {"iterations", "iterations", Unit::kCount},
                              {"wall_median_ns", "median", Unit::kDurationNs},
                              {"wall_p90_ns", "p90", Unit::kDurationNs},
                              {"wall_max_ns", "max", Unit::kDurationNs},
                              {"outliers", "outliers", Unit::kCount}});
    for (const IterationSet& set : r.sets) {
      sets.rows.push_back({int64_t{set.pid}, int64_t{set.tid}, set.pattern,
                           static_cast<int64_t>(set.iterations.size()), Round(set.wall.median),
                           Round(set.wall.p90), set.wall.max, set.outliers});
    }
  }

  AddLoopsTable(r, s);

  std::vector<Column> columns;
  if (several) columns.push_back({"pid", "pid", Unit::kNumber});
  for (Column c : std::vector<Column>{{"index", "#", Unit::kNumber},
                                      {"name", "range", Unit::kText},
                                      {"start_ns", "start", Unit::kTimestampNs},
                                      {"wall_ns", "wall", Unit::kDurationNs},
                                      {"gpu_busy_launched_ns", "launched busy", Unit::kDurationNs},
                                      {"gpu_busy_in_window_ns", "window busy", Unit::kDurationNs},
                                      {"gpu_busy_in_window_pct", "busy %", Unit::kPercent},
                                      {"gpu_span_ns", "GPU span", Unit::kDurationNs},
                                      {"kernels", "kernels", Unit::kCount},
                                      {"memops", "memops", Unit::kCount},
                                      {"outlier", "outlier", Unit::kText}}) {
    columns.push_back(std::move(c));
  }
  auto row_of = [&](const IterationSet& set, const Iteration& it) {
    std::vector<Value> row;
    if (several) row.push_back(int64_t{set.pid});
    for (Value v : std::vector<Value>{
             it.index, std::string(trace.str(it.name)), it.start_ns - trace.begin_ns(),
             it.wall_ns(), it.gpu_busy_launched_ns, it.gpu_busy_in_window_ns,
             Pct(static_cast<double>(it.gpu_busy_in_window_ns), static_cast<double>(it.wall_ns())),
             it.launched.span_ns(), it.launched.kernel_count, it.launched.memop_count,
             std::string(it.outlier  ? "yes"
                         : it.warmup ? "warm-up"
                                     : "")}) {
      row.push_back(std::move(v));
    }
    return row;
  };
  Table& all = s.AddTable("iterations", "Iterations in order", columns);
  int64_t total = 0;
  for (const IterationSet& set : r.sets) {
    for (const Iteration& it : set.iterations) {
      if (total++ < top_n) {
        all.rows.push_back(row_of(set, it));
        s.time_marks.push_back(
            {it.start_ns - trace.begin_ns(), "iteration " + std::to_string(it.index)});
      }
    }
  }
  all.total_rows = total;
  all.note =
      "launched busy = union of the GPU work launched inside the range; window busy = "
      "union of all GPU work on the process's devices within the range's wall time";

  std::vector<std::pair<const IterationSet*, const Iteration*>> outliers;
  for (const IterationSet& set : r.sets) {
    for (const Iteration& it : set.iterations) {
      if (it.outlier) outliers.push_back({&set, &it});
    }
  }
  if (!outliers.empty()) {
    std::stable_sort(outliers.begin(), outliers.end(), [](const auto& a, const auto& b) {
      return a.second->wall_ns() > b.second->wall_ns();
    });
    Table& t = s.AddTable("outliers", "Outlier iterations (slowest first)",
                          {{"pid", "pid", Unit::kNumber},
                           {"index", "#", Unit::kNumber},
                           {"name", "range", Unit::kText},
                           {"wall_ns", "wall", Unit::kDurationNs},
                           {"vs_median", "vs median", Unit::kRatio},
                           {"gpu_busy_launched_ns", "launched busy", Unit::kDurationNs},
                           {"kernels", "kernels", Unit::kCount}});
    for (size_t i = 0; i < outliers.size() && static_cast<int64_t>(i) < top_n; ++i) {
      const auto& [set, it] = outliers[i];
      t.rows.push_back(
          {int64_t{set->pid}, it->index, std::string(trace.str(it->name)), it->wall_ns(),
           set->wall.median > 0 ? static_cast<double>(it->wall_ns()) / set->wall.median : 0.0,
           it->gpu_busy_launched_ns, it->launched.kernel_count});
    }
    t.total_rows = static_cast<int64_t>(outliers.size());
    t.note = fmt::format("outlier: wall > median + max(3 x 1.4826 x MAD, 0.5 x median)");
    if (main.iterations.front().outlier && main.warmup == 0) {
      s.notes.push_back(
          "the first iteration is an outlier: often warm-up (allocator growth, autotuning, "
          "CUDA graph capture, lazy init); leave it out of steady-state numbers");
    }
  }

  auto add_series = [&](const char* key, const char* title, auto value) {
    Series& series = s.series.emplace_back();
    series.key = key;
    series.title = title;
    series.x_unit = Unit::kNumber;
    series.y_unit = Unit::kDurationNs;
    for (const Iteration& it : main.iterations) {
      series.x.push_back(static_cast<double>(it.index));
      series.y.push_back(static_cast<double>(value(it)));
    }
  };
  add_series("wall_ns", "Wall time per iteration",
             [](const Iteration& it) { return it.wall_ns(); });
  add_series("gpu_busy_launched_ns", "GPU busy (launched work) per iteration",
             [](const Iteration& it) { return it.gpu_busy_launched_ns; });
  add_series("gpu_busy_in_window_ns", "GPU busy within the iteration's wall time",
             [](const Iteration& it) { return it.gpu_busy_in_window_ns; });
  if (r.default_regex && r.method == "ranges") {
    s.notes.push_back("iterations found by name; pass --iterations REGEX to choose others");
  } else if (r.default_regex) {
    s.notes.push_back(fmt::format(
        "no range names an iteration, so the steps were found by {}; pass --iterations REGEX to "
        "take ranges instead",
        r.method));
  }
  if (const IterationLogJoin* join = IterationLogJoinOf(context)) {
    AddIterationLogToSection(trace, *join, top_n, s);
  }
  return Status::Ok();
}

}  // namespace sightline
