#include "importers/recorder/gpu_metrics_align.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace sightline {
namespace {

// The union of the intervals with the busy time before each piece: covered time in [a, b) by two
// binary searches.
class BusyUnion {
 public:
  explicit BusyUnion(std::vector<std::pair<TimeNs, TimeNs>> v) {
    std::sort(v.begin(), v.end());
    for (const auto& [s, e] : v) {
      if (e <= s) continue;
      if (!starts_.empty() && s <= ends_.back()) {
        ends_.back() = std::max(ends_.back(), e);
      } else {
        starts_.push_back(s);
        ends_.push_back(e);
      }
    }
    before_.resize(starts_.size());
    DurationNs sum = 0;
    for (size_t i = 0; i < starts_.size(); ++i) {
      before_[i] = sum;
      sum += ends_[i] - starts_[i];
    }
  }
  bool empty() const { return starts_.empty(); }
  // Busy time in (-inf, t).
  DurationNs Before(TimeNs t) const {
    const size_t i =
        static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), t) - starts_.begin());
    if (i == 0) return 0;
    return before_[i - 1] + std::min(t, ends_[i - 1]) - starts_[i - 1];
  }
  double Fraction(TimeNs a, TimeNs b) const {
    return b > a ? static_cast<double>(Before(b) - Before(a)) / static_cast<double>(b - a) : 0;
  }

 private:
  std::vector<TimeNs> starts_, ends_;
  std::vector<DurationNs> before_;
};

constexpr double kTransitionPct = 25;    // a change of GR Active between neighbours that counts
constexpr size_t kMinTransitions = 8;    // fewer: no alignment
constexpr size_t kMaxFitSamples = 4000;  // the fit uses at most this many samples (evenly spread)
constexpr DurationNs kCoarseStep = 50'000;
constexpr DurationNs kFineStep = 1'000;

}  // namespace

MetricAlignment AlignMetricSamples(std::vector<std::pair<TimeNs, TimeNs>> busy,
                                   const std::vector<MetricAlignSample>& samples,
                                   DurationNs max_shift_ns) {
  MetricAlignment out;
  const BusyUnion u(std::move(busy));
  if (u.empty() || samples.size() < 3) return out;
  // The samples next to a change of GR Active, and those changes' neighbours: the edges of the
  // GPU's work, which pin the shift down (long busy or idle stretches fit any small shift).
  std::vector<size_t> pick;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double v = samples[i].gr_active_pct;
    const bool edge =
        (i > 0 && std::abs(v - samples[i - 1].gr_active_pct) >= kTransitionPct) ||
        (i + 1 < samples.size() && std::abs(v - samples[i + 1].gr_active_pct) >= kTransitionPct);
    if (edge && std::isfinite(v)) pick.push_back(i);
  }
  out.transitions = static_cast<int64_t>(pick.size());
  if (pick.size() < kMinTransitions) return out;
  if (pick.size() > kMaxFitSamples) {
    std::vector<size_t> spread;
    for (size_t k = 0; k < kMaxFitSamples; ++k)
      spread.push_back(pick[k * pick.size() / kMaxFitSamples]);
    pick.swap(spread);
  }
  auto error = [&](DurationNs shift) {
    double sum = 0;
    for (size_t i : pick) {
      const MetricAlignSample& s = samples[i];
      const double d = std::clamp(s.gr_active_pct / 100.0, 0.0, 1.0) -
                       u.Fraction(s.start_ns + shift, s.end_ns + shift);
      sum += d * d;
    }
    return sum / static_cast<double>(pick.size());
  };
  DurationNs best = 0;
  double best_error = error(0);
  out.error_before = best_error;
  auto search = [&](DurationNs from, DurationNs to, DurationNs step) {
    for (DurationNs shift = from; shift <= to; shift += step) {
      const double e = error(shift);
      if (e < best_error) {
        best_error = e;
        best = shift;
      }
    }
  };
  search(-max_shift_ns, max_shift_ns, kCoarseStep);
  search(best - kCoarseStep, best + kCoarseStep, kFineStep);
  out.checked = true;
  out.best_ns = best;
  out.error_after = best_error;
  // Only a clear improvement moves the samples: a shift that fits about as well as none is noise.
  if (best != 0 && best_error < 0.5 * out.error_before) {
    out.shift_ns = best;
  } else {
    out.error_after = out.error_before;
  }
  return out;
}

}  // namespace sightline
