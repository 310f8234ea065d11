#include "diff/verdict_decision.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace sightline::verdict {
namespace {

std::string Signed(double v, const char* unit) { return fmt::format("{:+.1f}{}", v, unit); }

std::string PointsPhrase(double v) {
  const std::string s = fmt::format("{:+.1f}", v);
  return s == "+1.0" || s == "-1.0" ? s + " point" : s + " points";
}

// How a statistic reads in the sentence: with its interval when it decided, shorter as context.
std::string Statistic(const char* name, const Estimate& e, const char* what, bool full,
                      double confidence, const std::string& loop) {
  std::string s = fmt::format("{} {}", name, Signed(e.value, "%"));
  const bool interval = std::isfinite(e.lo) && std::isfinite(e.hi);
  if (interval) s += fmt::format(" ± {:.1f}%", (e.hi - e.lo) / 2);
  if (!loop.empty()) s += fmt::format(" in `{}`", loop);
  if (!full) return s;
  if (interval) {
    return s + fmt::format(" ({}; {:.0f}%: {} to {})", what, confidence * 100, Signed(e.lo, "%"),
                           Signed(e.hi, "%"));
  }
  return s + fmt::format(" ({}; no interval)", what);
}

// One gated statistic against the threshold.
struct Gated {
  const char* name;    // "step time", "GPU time launched"
  const char* detail;  // "median step time", "median GPU time launched per step"
  const Estimate* e;
};

}  // namespace

void MakeSentence(VerdictResult& r, const std::string& loop) {
  const Estimate& m = r.median_change_pct;
  std::string s;
  switch (r.decision) {
    case VerdictDecision::kSlower:
      s = "Slower: ";
      break;
    case VerdictDecision::kNotSlower:
      s = "Not slower: ";
      break;
    case VerdictDecision::kCannotTell:
      s = "Cannot tell: ";
      break;
    case VerdictDecision::kNoGate:
      break;
  }
  if (!std::isfinite(m.value)) {
    r.sentence = s + "the step time has no finite median on one side.";
    return;
  }
  // The statistics that decided come first, with their intervals; the others follow as context.
  // When none decided (no gate, too few iterations) the step time leads, unless it is host noise.
  const Estimate& l = r.launched_change_pct;
  const bool launched = std::isfinite(l.value);
  const bool none_decided = r.decided_by.empty();
  const bool step_decided = r.decided_by.find("step time") != std::string::npos;
  const bool launched_decided = r.decided_by.find("GPU time launched") != std::string::npos;
  const bool launched_first =
      launched && (none_decided ? !r.step_time_gated : launched_decided && !step_decided);
  const char* step_name = s.empty() && !launched_first ? "Step time" : "step time";
  std::string step =
      Statistic(step_name, m, "median", none_decided ? !launched_first : step_decided, r.confidence,
                launched_first ? "" : loop);
  if (!r.step_time_gated) step += " (host noise here: not gated)";
  std::string gpu;
  if (launched) {
    gpu = Statistic("GPU time launched", l, "median per step",
                    none_decided ? launched_first : launched_decided, r.confidence,
                    launched_first ? loop : "");
  }
  if (launched_first) {
    s += gpu + "; " + step;
  } else {
    s += step;
    if (!gpu.empty()) s += ", " + gpu;
  }
  std::vector<const VerdictPart*> clear;
  for (const VerdictPart& p : r.parts) {
    if (p.points.excludes_zero() && std::abs(p.points.value) >= 0.05) clear.push_back(&p);
  }
  if (clear.empty()) {
    s += "; no part of the step time changed beyond the noise.";
  } else {
    s += fmt::format("; of the mean's {}: ", Signed(r.mean_change_pct.value, "%"));
    constexpr size_t kNamed = 3;
    for (size_t i = 0; i < clear.size() && i < kNamed; ++i) {
      const VerdictPart& p = *clear[i];
      std::string what = p.label;
      if (p.appeared) what += " (appeared)";
      if (p.vanished) what += " (vanished)";
      s += fmt::format("{}{} from {}", i == 0 ? "" : ", ", PointsPhrase(p.points.value), what);
    }
    if (clear.size() > kNamed) s += fmt::format(", and {} more parts", clear.size() - kNamed);
    s += ".";
  }
  r.sentence = std::move(s);
}

// Whether the step time is host noise (kHostBoundBusyPct): then only the GPU time launched is
// gated, and the verdict says why.
void JudgeStepTime(VerdictResult& r) {
  const Estimate& m = r.median_change_pct;
  const Estimate& l = r.launched_change_pct;
  if (r.mean_before_ns > 0) r.busy_share_before_pct = r.gpu_busy.before_ns / r.mean_before_ns * 100;
  if (r.mean_after_ns > 0) r.busy_share_after_pct = r.gpu_busy.after_ns / r.mean_after_ns * 100;
  if (r.runs_before > 1 && r.runs_after > 1) return;
  if (!std::isfinite(m.lo) || !std::isfinite(m.hi) || !std::isfinite(l.lo) ||
      !std::isfinite(l.hi)) {
    return;
  }
  if (!(r.busy_share_before_pct < kHostBoundBusyPct &&
        r.busy_share_after_pct < kHostBoundBusyPct)) {
    return;
  }
  const double step_width = m.hi - m.lo, launched_width = l.hi - l.lo;
  if (!(step_width >= kHostNoiseWidthRatio * launched_width) || !(step_width > 0)) return;
  r.step_time_gated = false;
  const std::string times =
      launched_width > 0 ? fmt::format(", {:.0f} times as wide as", step_width / launched_width)
                         : std::string(" against");
  r.step_time_noise = fmt::format(
      "the step time is host noise here: one run on a side (its interval holds the spread "
      "between that run's steps, not between runs), the GPU busy {:.0f}% and {:.0f}% of the step "
      "(the rest is host time), and its interval ±{:.1f}%{} the GPU time launched's (±{:.1f}%); "
      "so the GPU time launched per step decides",
      r.busy_share_before_pct, r.busy_share_after_pct, step_width / 2, times, launched_width / 2);
}

void Decide(const VerdictOptions& options, VerdictResult& r) {
  if (!options.threshold_pct.has_value()) return;
  const double t = *options.threshold_pct;
  r.threshold_pct = t;
  const int64_t n = std::min(r.iterations_before, r.iterations_after);
  if (n < options.min_iterations) {
    r.decision = VerdictDecision::kCannotTell;
    r.decision_reason = fmt::format(
        "only {} iteration(s) on the smaller side; the verdict needs at least {} per side to "
        "estimate the spread",
        n, options.min_iterations);
    r.iterations_to_decide = options.min_iterations;
    return;
  }
  const Estimate& m = r.median_change_pct;
  if (!std::isfinite(m.lo) || !std::isfinite(m.hi) || !std::isfinite(m.value)) {
    r.decision = VerdictDecision::kCannotTell;
    r.decision_reason = "the change in median step time has no finite interval";
    return;
  }
  std::vector<Gated> gated;
  if (r.step_time_gated) gated.push_back({"step time", "median step time", &r.median_change_pct});
  const Estimate& l = r.launched_change_pct;
  if (std::isfinite(l.value) && std::isfinite(l.lo) && std::isfinite(l.hi)) {
    gated.push_back({"GPU time launched", "median GPU time launched per step", &l});
  }
  const std::string conf = fmt::format("{:.0f}%", r.confidence * 100);
  auto describe = [&](const Gated& g) {
    return fmt::format("{} {} to {}", g.name, Signed(g.e->lo, "%"), Signed(g.e->hi, "%"));
  };
  // decided_by_detail: "median GPU time launched per step +7.0% (95%: +6.9% to +7.1%), above the
  // threshold +5.0%".
  auto detail = [&](const std::vector<const Gated*>& gs, const char* relation) {
    std::vector<std::string> parts;
    for (const Gated* g : gs) {
      parts.push_back(fmt::format("{} {} ({}: {} to {})", g->detail, Signed(g->e->value, "%"), conf,
                                  Signed(g->e->lo, "%"), Signed(g->e->hi, "%")));
    }
    return fmt::format("{}, {} the threshold {}", fmt::join(parts, " and "), relation,
                       Signed(t, "%"));
  };
  // Why the step time is left out, after the reason.
  const std::string noise = r.step_time_gated ? "" : "; " + r.step_time_noise;
  std::vector<const Gated*> above, straddling;
  for (const Gated& g : gated) {
    if (g.e->lo > t) {
      above.push_back(&g);
    } else if (g.e->hi > t) {
      straddling.push_back(&g);
    }
  }
  auto names_of = [](const std::vector<const Gated*>& gs) {
    std::vector<std::string> names;
    for (const Gated* g : gs) names.push_back(g->name);
    return fmt::format("{}", fmt::join(names, " and "));
  };
  auto what_of = [&](const std::vector<const Gated*>& gs) {
    std::vector<std::string> what;
    for (const Gated* g : gs) what.push_back(describe(*g));
    return fmt::format("{}", fmt::join(what, "; "));
  };
  if (!above.empty()) {
    r.decision = VerdictDecision::kSlower;
    r.decided_by = names_of(above);
    r.decided_by_detail = detail(above, "above");
    r.decision_reason =
        fmt::format("the whole {} interval of the change in median {} is above the threshold {}{}",
                    conf, what_of(above), Signed(t, "%"), noise);
    return;
  }
  if (straddling.empty()) {
    r.decision = VerdictDecision::kNotSlower;
    std::vector<const Gated*> all;
    for (const Gated& g : gated) all.push_back(&g);
    r.decided_by = names_of(all);
    r.decided_by_detail = detail(all, "at or below");
    r.decision_reason = fmt::format(
        "the whole {} interval of the change in median {} is at or below the threshold {}{}", conf,
        what_of(all), Signed(t, "%"), noise);
    return;
  }
  r.decision = VerdictDecision::kCannotTell;
  r.decided_by = names_of(straddling);
  r.decided_by_detail = detail(straddling, straddling.size() == 1 ? "straddles" : "straddle");
  r.decision_reason =
      fmt::format("the {} interval of the change in median {} straddles the threshold {}{}", conf,
                  what_of(straddling), Signed(t, "%"), noise);
  // An interval's half on the threshold's side shrinks as 1/sqrt(n): it clears the threshold once
  // n grows by (half-width / distance)^2. The statistic that needs the most decides.
  double factor = 0;
  for (const Gated* g : straddling) {
    const Estimate& e = *g->e;
    const double distance = std::abs(e.value - t);
    const double half = e.value >= t ? e.value - e.lo : e.hi - e.value;
    if (distance < 1e-9 || !(half > 0)) return;
    factor = std::max(factor, (half / distance) * (half / distance));
  }
  constexpr double kMaxFactor = 1e6;  // beyond this the number means "never", not a plan
  if (factor > kMaxFactor) return;
  const int64_t runs = std::max(r.runs_before, r.runs_after);
  if (runs > 1) {
    r.runs_to_decide = static_cast<int64_t>(std::ceil(static_cast<double>(runs) * factor));
  }
  r.iterations_to_decide = static_cast<int64_t>(std::ceil(static_cast<double>(n) * factor));
}

}  // namespace sightline::verdict
