// Iterations: finds the repeated step of an inference or training loop from host ranges (PyTorch
// ProfilerStep#N, NVTX "iteration N", TensorRT-LLM "[Executor] _forward_step N: ...", vLLM
// "execute_context_..."), and measures each one: wall time, GPU work launched inside it, GPU busy
// time; then the distribution and outliers. Input: one Trace. Units: ns.
// Definitions: docs/metrics.md, "Iterations".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/stats.h"
#include "base/status.h"
#include "facts/launch_projection.h"
#include "model/trace.h"

namespace sightline {

// The default iteration names (RE2 syntax, matched case-insensitively against the whole name).
extern const char kDefaultIterationRegex[];

struct IterationsOptions {
  // Regex (RE2 syntax) that must match a range's whole name (case-sensitive); empty: the default
  // names, case-insensitive.
  std::string name_regex;
  // An iteration is an outlier when wall > median + max(outlier_mads * 1.4826 * MAD,
  // (outlier_min_ratio - 1) * median), with at least 3 iterations.
  double outlier_mads = 3.0;
  double outlier_min_ratio = 1.5;
};

struct Iteration {
  int64_t index = 0;  // 0-based position in its set
  int32_t range_row = kNoRow;
  StringId name;
  TimeNs start_ns = 0, end_ns = 0;
  LaunchedWork launched;                // work whose launching call starts inside the range
  DurationNs gpu_busy_launched_ns = 0;  // union of the launched work's intervals
  // Union of all GPU work on the set's devices that falls inside [start_ns, end_ns).
  DurationNs gpu_busy_in_window_ns = 0;
  bool outlier = false;
  // One of the set's first steps, before the loop settles (first calls: lazy module loading,
  // autotuning, allocator growth, graph capture): neither counted in the distribution nor an
  // outlier. IterationSet::warmup says how many.
  bool warmup = false;

  DurationNs wall_ns() const { return end_ns - start_ns; }
};

// The iterations of one process. Matching ranges are grouped by thread and, for the default names,
// by name pattern; within a group only the outermost ranges count, and the group with the most
// of them (then the longest in total) is the process's set.
struct IterationSet {
  int32_t pid = -1, tid = -1;
  std::string pattern;           // the name with digit runs replaced by "N"; the regex if given
  std::vector<int32_t> devices;  // devices the process put work on (all devices when unknown)
  std::vector<Iteration> iterations;
  DurationStats wall;               // over wall_ns
  double wall_mad_ns = 0;           // median absolute deviation of wall_ns
  double outlier_threshold_ns = 0;  // 0 when fewer than 3 iterations
  int64_t outliers = 0;
  // Steps at the start before the steady state: the longest prefix, within the first half of
  // the steps, that ends with a step over the steady state's outlier threshold (from the second
  // half's median and MAD) and of whose steps at least half are over it. The distribution and
  // the outliers are over the steps after it.
  int64_t warmup = 0;
  DurationNs warmup_ns = 0;  // their summed wall time
};

struct IterationsResult {
  std::string regex;  // the regex used
  bool default_regex = true;
  // How the steps were found: "ranges" (names matching the regex), or, in a trace whose ranges
  // name no step, "graph replays" or "synchronize cadence" (facts/inferred_steps.h), with the
  // share of those steps whose launch count is within 10% of the median's (how sure).
  std::string method = "ranges";
  double regular_share = 1.0;
  int64_t matching_ranges = 0;     // ranges whose name matched, before choosing sets
  std::vector<IterationSet> sets;  // most iterations first; sets[0] is the main set
  // With the default names, the other loops of each set's process: groups of ranges named by
  // another pattern (a graph_step_N loop of CUDA graph replays beside an eager_step_N one) with
  // at least kMinOtherLoopIterations of them, measured like the sets; most iterations first. The
  // diff's verdict compares each loop on its own (diff/loop_verdicts.h).
  std::vector<IterationSet> other_loops;
  // Inferred steps of a kernel mix too rare to be a loop (fewer than kMinOtherLoopIterations
  // steps: a lone prefill) or too small (under a quarter of the loop's kernels per step: the
  // set-up before a call's first forward pass): how many, how long.
  int64_t other_steps = 0;
  DurationNs other_steps_ns = 0;
};
inline constexpr size_t kMinOtherLoopIterations = 2;

class GpuTimeFacts;  // facts/gpu_time_facts.h
class GraphFacts;    // facts/graph_facts.h
class HostFacts;     // facts/host_facts.h

// Finds the iterations of `trace` with `options`, measured with its GPU time and launches, and
// inferred from its graph replays and synchronizations when no range names them (LoopFacts::
// Iterations() keeps the ones the facts options ask for; call this, or the TraceFacts overload in
// facts/trace_facts.h, for others). The "iterations" section is
// analyses/iterations/iterations_section.h's.
StatusOr<IterationsResult> ComputeIterations(const Trace& trace, GpuTimeFacts& gpu, HostFacts& host,
                                             GraphFacts& graphs, const IterationsOptions& options);

// Whether `regex` (an --iterations value; empty: the default names) compiles, with the error
// ComputeIterations would give; the CLI checks it before reading any input.
Status CheckIterationsRegex(const std::string& regex);

}  // namespace sightline
