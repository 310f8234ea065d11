// Trace diff: compares a baseline and a candidate trace of the same workload (also across formats:
// an nsys export against a PyTorch trace) per kernel (matched by normalized name), per kernel
// category, per NVTX range and per iteration, and applies the CI gate of `sightline diff
// --fail-if-slower`. Built on the kernel_summary, iterations, nvtx_projection and overview
// analyses. Units: ns. Rules: docs/analyses/diff.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/stats.h"
#include "base/status.h"
#include "model/trace.h"

namespace sightline {

// Which ranges are iterations comes from each side's AnalysisContext options (--iterations).
struct TraceDiffOptions {
  // Kernels holding less than this share of the baseline's GPU time are not gated one by one.
  double min_share_pct = 1.0;
  // The gate: fail when GPU time, or a gated kernel's time, grew by more than this percentage.
  std::optional<double> fail_if_slower_pct;
};

// What the before/after values of the kernel, category and total comparisons are.
enum class DiffBasis {
  // Sums over each whole trace.
  kTotal,
  // GPU work launched inside each trace's iterations, divided by its iteration count: the mean
  // per iteration. Used when both traces have iterations and that work is at least
  // kMinIterationCoveragePct of each trace's GPU time; warm-up and work outside the loop (which
  // one tool captures and another does not) then drop out, and different run lengths compare.
  kPerIteration,
};
inline constexpr double kMinIterationCoveragePct = 50.0;
const char* DiffBasisName(DiffBasis basis);  // "total", "per_iteration"

// One compared item: a kernel, a category, a range group, an iteration statistic.
struct DiffItem {
  std::string key;       // what matched the two sides (normalized kernel name, category, ...)
  std::string name;      // display name
  std::string detail;    // kernels: full name (baseline's); ranges: nesting path
  std::string category;  // kernels: KernelCategoryName
  int64_t count_before = 0, count_after = 0;
  DurationNs total_before_ns = 0, total_after_ns = 0;  // over the whole trace
  double before_ns = 0, after_ns = 0;  // on the result's basis (equal to totals for kTotal)
  double share_before_pct = 0;         // of the baseline's GPU time, on the same basis
  bool loose_match = false;            // kernels: matched by base name only (templates differ)

  double delta_ns() const { return after_ns - before_ns; }
  // after / before; NaN when before is 0.
  double ratio() const { return before_ns > 0 ? after_ns / before_ns : std::nan(""); }
  // (after - before) / before * 100; NaN when before is 0.
  double delta_pct() const {
    return before_ns > 0 ? (after_ns / before_ns - 1) * 100 : std::nan("");
  }
};

struct IterationDiff {
  int64_t count_before = 0, count_after = 0;
  std::string pattern_before, pattern_after;  // the iteration names found ("ProfilerStep#N")
  // Statistics of each side's main iteration set (not scaled): count, wall mean/median/p90/max,
  // mean GPU busy in the iteration window, mean GPU time launched per iteration.
  std::vector<DiffItem> stats;
  // Iteration i of the baseline against iteration i of the candidate: wall time.
  std::vector<DiffItem> by_index;
};

struct GateFailure {
  std::string what;  // "GPU time" or the kernel's display name
  std::string kind;  // "total" or "kernel"
  double before_ns = 0, after_ns = 0, growth_pct = 0;
};

struct GateResult {
  bool enabled = false;
  double threshold_pct = 0;
  double min_share_pct = 0;
  int64_t gated_kernels = 0;  // matched kernels at or above min_share_pct
  bool failed = false;
  std::vector<GateFailure> failures;  // total first, then kernels by growth
};

struct TraceDiffResult {
  DiffBasis basis = DiffBasis::kTotal;
  std::string basis_reason;                             // one sentence: why this basis
  int64_t iterations_before = 0, iterations_after = 0;  // main set; 0 when none found
  // GPU time launched inside the iterations / all GPU time, per side; 0 without iterations.
  double iteration_coverage_before_pct = 0, iteration_coverage_after_pct = 0;
  DiffItem trace_gpu_time;  // GPU time over the whole traces, never scaled
  // GPU time = sum of kernel and memory-operation durations (overlaps counted twice), as nsys
  // stats; on the basis (per iteration: only work launched inside the iterations).
  DiffItem gpu_time;
  DiffItem kernel_time;
  DiffItem memop_time;
  DiffItem gpu_busy;  // union of GPU work over the whole traces, summed over devices (overview)
  // Kernels in both traces, largest regression (delta on the basis) first.
  std::vector<DiffItem> kernels;
  std::vector<DiffItem> appeared;                   // only in the candidate, largest first
  std::vector<DiffItem> vanished;                   // only in the baseline, largest first
  int64_t distinct_before = 0, distinct_after = 0;  // distinct normalized kernel names
  int64_t loose_matches = 0;
  // Kernel time of matched kernels / all kernel time, per side.
  double matched_share_before_pct = 0, matched_share_after_pct = 0;
  std::vector<DiffItem> categories;  // kernel categories and memory-operation kinds
  std::vector<DiffItem> ranges;      // NVTX / annotation groups by GPU time launched (totals)
  std::optional<IterationDiff> iterations;  // when both traces have iterations
  GateResult gate;
};

StatusOr<TraceDiffResult> ComputeTraceDiff(AnalysisContext& baseline, AnalysisContext& candidate,
                                           const TraceDiffOptions& options);

}  // namespace sightline
