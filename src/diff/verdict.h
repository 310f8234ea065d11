// The diff's verdict: how much the step time changed, how sure that is, and where the change went.
// Resamples the per-iteration figures of each side (diff/step_samples.h; several runs per side:
// runs, then iterations within each run) with a seeded bootstrap, so a report is reproducible.
// Gives the change in median step time with a percentile interval, the three-way gate decision
// and the change in mean step time split into parts that add up to it, each with its interval.
// Units: ns, percent, percentage points. Rules: docs/analyses/diff.md, "Verdict".
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diff/step_samples.h"

namespace sightline {

inline constexpr uint64_t kVerdictSeed =
    0x5349474854ULL;  // fixed: the same inputs, the same report

struct VerdictOptions {
  std::optional<double> threshold_pct;  // the gate: slower means more than this percent
  int resamples = 2000;
  double confidence = 0.95;
  uint64_t seed = kVerdictSeed;
  int64_t min_iterations = 5;  // per side, fewer: cannot tell
  // Named in the sentence ("... in `graph_step_N`") when a trace holds several loops.
  std::string loop_label;
};

// The step time is host noise, and the GPU time launched alone is gated, when a side has one
// run (the interval cannot hold the spread between runs, which for host time is wide), the GPU
// is busy less than kHostBoundBusyPct of the step on both sides (the step is mostly host time)
// and the step time's interval is at least kHostNoiseWidthRatio times as wide as the GPU time
// launched's. On an H200, two unchanged runs of examples/graph_decode differed by -17.5% in eager
// step time (GPU busy 7% of it) while their GPU time launched moved 0.1%.
inline constexpr double kHostBoundBusyPct = 50;
inline constexpr double kHostNoiseWidthRatio = 5;

// A point estimate and its interval (NaN when not defined, e.g. a baseline of 0).
struct Estimate {
  double value = std::nan("");
  double lo = std::nan("");
  double hi = std::nan("");
  // The interval lies wholly above or below 0.
  bool excludes_zero() const { return lo > 0 || hi < 0; }
};

enum class VerdictDecision { kNoGate, kSlower, kNotSlower, kCannotTell };
const char* VerdictDecisionName(
    VerdictDecision d);  // "none", "slower", "not_slower", "cannot_tell"

// One part of the step time (or a group of parts: a range, a category, all GPU work, all idle).
struct VerdictPart {
  std::string key;    // StepPart::Key(), or "range\x1f<name>", "category\x1f<name>", ...
  std::string label;  // for the report
  std::string kind;   // "gpu", "idle"; groups: "range", "category", "total"
  std::string range, what;
  double before_ns = 0, after_ns = 0;  // mean per iteration
  Estimate change_pct;                 // (after / before - 1) * 100
  // (after - before) / the baseline's mean step time * 100: the parts' points add up to the
  // change in mean step time.
  Estimate points;
  bool appeared = false, vanished = false;  // 0 on one side

  double delta_ns() const { return after_ns - before_ns; }
};

struct VerdictResult {
  bool available = false;
  std::string unavailable_reason;  // why there is no verdict (no iterations on a side)
  int64_t runs_before = 0, runs_after = 0;
  int64_t iterations_before = 0, iterations_after = 0;
  int resamples = 0;
  double confidence = 0;
  // Several runs in all (3 or more): every interval also holds the estimate ± Student's t over the
  // runs' own figures (the spread between runs), not only the bootstrap's.
  bool between_runs = false;
  uint64_t seed = 0;

  double median_before_ns = 0, median_after_ns = 0;
  Estimate median_change_pct;  // the headline, and what the gate reads
  double mean_before_ns = 0, mean_after_ns = 0;
  Estimate mean_change_pct;  // what the parts add up to
  // The median GPU time launched per iteration (RunSamples::launched_ns), gated beside the step
  // time: a host loop that queues work ahead of the GPU hides a slower kernel from its step time.
  double launched_median_before_ns = 0, launched_median_after_ns = 0;
  Estimate launched_change_pct;

  VerdictPart gpu_busy, gpu_idle;  // sums of the GPU and idle parts
  // GPU busy (mean) / mean step time * 100, per side.
  double busy_share_before_pct = 0, busy_share_after_pct = 0;
  // False when the step time is host noise (kHostBoundBusyPct): it is shown, not gated, and
  // step_time_noise says why in one clause.
  bool step_time_gated = true;
  std::string step_time_noise;
  std::vector<VerdictPart> parts;       // largest |points| first
  std::vector<VerdictPart> ranges;      // GPU work by range, largest |points| first
  std::vector<VerdictPart> categories;  // GPU work by category, largest |points| first

  // The gate reads the step time (unless it is host noise) and the GPU time launched (both
  // medians): slower when either interval is wholly above the threshold, not slower when both
  // are at or below it (a statistic without a value, e.g. no linked launches, is left out), else
  // cannot tell.
  VerdictDecision decision = VerdictDecision::kNoGate;
  double threshold_pct = 0;
  std::string decision_reason;  // one sentence
  std::string decided_by;       // "step time", "GPU time launched", or both joined by " and "
  // The statistics that decided with their intervals and the threshold they crossed (or stayed
  // under, or straddle): "median GPU time launched per step +7.0% (95%: +6.9% to +7.1%), above
  // the threshold +5.0%".
  std::string decided_by_detail;
  // Cannot tell: about how many iterations per side (runs per side when a side has several)
  // would make the interval clear the threshold at the same estimate; absent when no number of
  // them would (the estimate sits on the threshold).
  std::optional<int64_t> iterations_to_decide, runs_to_decide;

  std::string loop;  // the iteration names of the loop compared ("graph_step_N")
  // "Slower: step time +6.8% ± 0.9% (median; 95%: ...), GPU time launched ...; of the mean's
  // ...": the statistics that decided first, with their intervals, then the others as context.
  std::string sentence;
  // What the reader should know about the inputs: runs left out for having no iterations,
  // iteration names that differ between runs.
  std::vector<std::string> notes;
};

// `before` and `after` are the runs of each side (at least one each). Runs without iterations are
// ignored; a side with none gives an unavailable verdict.
VerdictResult ComputeVerdict(const std::vector<RunSamples>& before,
                             const std::vector<RunSamples>& after, const VerdictOptions& options);

}  // namespace sightline
