// `sightline diff`'s options: the gate and how the inputs split into sides. Read by the diff stage
// (src/diff), the serving diff (serving/serving_diff.h) and the TensorRT diff, which sit beside or
// above the analyses; here, in common/, so that AnalyzeOptions can hold them.
#pragma once

#include <optional>

namespace sightline {

struct DiffOptions {
  // Kernels under this share (percent) of the baseline's GPU time are not gated one by one
  // (--min-share); the gate fails when GPU time or a gated kernel grew by more than
  // fail_if_slower_pct (--fail-if-slower).
  double min_share_pct = 1.0;
  std::optional<double> fail_if_slower_pct;
  // With several runs per side: the first this many traces of the set are the baseline's runs, the
  // rest the candidate's (docs/analyses/diff.md, "Verdict").
  int baseline_runs = 1;
};

}  // namespace sightline
