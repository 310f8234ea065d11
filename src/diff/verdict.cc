#include "diff/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <unordered_map>

#include "base/stats.h"

namespace sightline {

const char* VerdictDecisionName(VerdictDecision d) {
  switch (d) {
    case VerdictDecision::kSlower:
      return "slower";
    case VerdictDecision::kNotSlower:
      return "not_slower";
    case VerdictDecision::kCannotTell:
      return "cannot_tell";
    case VerdictDecision::kNoGate:
      break;
  }
  return "none";
}

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// One side's iterations, with every run's parts laid out on the common part list.
struct Side {
  std::vector<std::vector<double>> wall;      // [run][iteration]
  std::vector<std::vector<double>> launched;  // [run][iteration]
  std::vector<std::vector<double>> rows;      // [run][iteration * parts + part]
  int64_t iterations = 0;
};

// What one draw (or the data itself) gives for a side: the wall times drawn and the mean of each
// part.
struct Draw {
  std::vector<double> wall, launched;
  std::vector<double> part_mean;
  double wall_mean = 0;
};

double DrawMedian(std::vector<double>& v) {
  if (v.empty()) return kNan;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

// A uniform index in [0, n). Modulo keeps the draws the same on every standard library (the
// distributions of <random> are not specified bit for bit); its bias is below n / 2^64.
size_t Pick(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }

// Draws a side: with one run, its iterations with replacement; with several, runs with
// replacement and then the iterations of each drawn run with replacement (so that the spread
// between runs counts). `rng` null: the data as it is.
void DrawSide(const Side& side, size_t num_parts, std::mt19937_64* rng, Draw& d) {
  d.wall.clear();
  d.launched.clear();
  d.part_mean.assign(num_parts, 0.0);
  auto take = [&](size_t r, size_t i) {
    d.wall.push_back(side.wall[r][i]);
    d.launched.push_back(side.launched[r][i]);
    const double* row = side.rows[r].data() + i * num_parts;
    for (size_t p = 0; p < num_parts; ++p) d.part_mean[p] += row[p];
  };
  const size_t runs = side.wall.size();
  for (size_t k = 0; k < runs; ++k) {
    const size_t r = rng == nullptr || runs == 1 ? k : Pick(*rng, runs);
    const size_t n = side.wall[r].size();
    for (size_t j = 0; j < n; ++j) take(r, rng == nullptr ? j : Pick(*rng, n));
  }
  double sum = 0;
  for (double w : d.wall) sum += w;
  const double count = static_cast<double>(d.wall.size());
  d.wall_mean = sum / count;
  for (double& m : d.part_mean) m /= count;
}

// The q-quantile of the finite values (linear between order statistics); NaN when fewer than
// half of the draws gave a finite value.
double Quantile(std::vector<double> v, double q) {
  const size_t total = v.size();
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty() || v.size() * 2 < total) return kNan;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double ChangePct(double before, double after) {
  return before > 0 ? (after / before - 1) * 100 : kNan;
}

// A series: the sum of some parts (one part, a range, a category, all GPU work, all idle).
struct PartSeries {
  VerdictPart out;
  std::vector<size_t> members;
  std::vector<double> change, points;  // per draw

  double Sum(const std::vector<double>& part_mean) const {
    double s = 0;
    for (size_t p : members) s += part_mean[p];
    return s;
  }
};

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

// One gated statistic against the threshold.
struct Gated {
  const char* name;    // "step time", "GPU time launched"
  const char* detail;  // "median step time", "median GPU time launched per step"
  const Estimate* e;
};

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

// Each run's own figures: the median and mean step, the median GPU time launched, each part's
// mean; [run] (part_mean: [run][part]).
struct PerRun {
  std::vector<double> median, mean, launched;
  std::vector<std::vector<double>> part_mean;
};

PerRun FiguresPerRun(const Side& s, size_t num_parts) {
  PerRun out;
  for (size_t r = 0; r < s.wall.size(); ++r) {
    std::vector<double> w = s.wall[r], l = s.launched[r];
    const double n = static_cast<double>(w.size());
    double sum = 0;
    for (double x : w) sum += x;
    out.mean.push_back(sum / n);
    out.median.push_back(DrawMedian(w));
    out.launched.push_back(DrawMedian(l));
    std::vector<double>& m = out.part_mean.emplace_back(num_parts, 0.0);
    for (size_t i = 0; i < w.size(); ++i) {
      for (size_t p = 0; p < num_parts; ++p) m[p] += s.rows[r][i * num_parts + p];
    }
    for (double& x : m) x /= n;
  }
  return out;
}

double MeanOf(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? kNan : s / static_cast<double>(v.size());
}

// Widens `e` to hold value ± half (percent) as well: the union of the bootstrap interval and the
// between-runs one. An estimate without an interval keeps none.
void Widen(Estimate& e, double half) {
  if (!std::isfinite(half) || !std::isfinite(e.value) || !std::isfinite(e.lo) ||
      !std::isfinite(e.hi)) {
    return;
  }
  e.lo = std::min(e.lo, e.value - half);
  e.hi = std::max(e.hi, e.value + half);
}

// `half` (ns) relative to `base` (ns), in percent; NaN when base is not positive.
double PercentOf(double half, double base) { return base > 0 ? half / base * 100 : kNan; }

bool ByPoints(const VerdictPart& a, const VerdictPart& b) {
  const double x = std::isfinite(a.points.value) ? std::abs(a.points.value) : -1;
  const double y = std::isfinite(b.points.value) ? std::abs(b.points.value) : -1;
  if (x != y) return x > y;
  return a.key < b.key;
}

}  // namespace

VerdictResult ComputeVerdict(const std::vector<RunSamples>& before,
                             const std::vector<RunSamples>& after, const VerdictOptions& options) {
  VerdictResult r;
  r.resamples = options.resamples;
  r.confidence = options.confidence;
  r.seed = options.seed;

  // The common part list, in first-seen order.
  std::vector<StepPart> parts;
  std::unordered_map<std::string, size_t> part_index;
  for (const std::vector<RunSamples>* side : {&before, &after}) {
    for (const RunSamples& run : *side) {
      for (const StepPart& p : run.parts) {
        if (part_index.try_emplace(p.Key(), parts.size()).second) parts.push_back(p);
      }
    }
  }
  const size_t num_parts = parts.size();
  std::vector<std::string> patterns;
  auto lay_out = [&](const std::vector<RunSamples>& runs, int64_t& run_count, const char* side) {
    Side s;
    std::vector<std::string> without;
    for (const RunSamples& run : runs) {
      if (run.iterations() == 0) {
        without.push_back(run.source);
        continue;
      }
      if (std::find(patterns.begin(), patterns.end(), run.pattern) == patterns.end()) {
        patterns.push_back(run.pattern);
      }
      s.wall.push_back(run.wall_ns);
      s.launched.push_back(run.launched_ns);
      s.launched.back().resize(run.iterations(), 0.0);
      std::vector<double>& rows = s.rows.emplace_back(run.iterations() * num_parts, 0.0);
      for (size_t p = 0; p < run.parts.size(); ++p) {
        const size_t q = part_index.at(run.parts[p].Key());
        for (size_t i = 0; i < run.iterations(); ++i) rows[i * num_parts + q] = run.part_ns[p][i];
      }
      s.iterations += static_cast<int64_t>(run.iterations());
    }
    run_count = static_cast<int64_t>(s.wall.size());
    if (!without.empty() && run_count > 0) {
      r.notes.push_back(fmt::format("{} run(s) of the {} left out for having no iterations: {}",
                                    without.size(), side, fmt::join(without, ", ")));
    }
    return s;
  };
  const Side b = lay_out(before, r.runs_before, "baseline");
  const Side a = lay_out(after, r.runs_after, "candidate");
  r.loop = fmt::format("{}", fmt::join(patterns, ", "));
  if (patterns.size() > 1) {
    r.notes.push_back(fmt::format(
        "iteration names differ between runs ({}): each run's iterations are compared as steps of "
        "one loop; pass --iterations REGEX if they are not",
        fmt::join(patterns, ", ")));
  }
  r.iterations_before = b.iterations;
  r.iterations_after = a.iterations;
  if (r.runs_before == 1 || r.runs_after == 1) {
    r.notes.push_back(
        "one run on a side: the interval holds the spread between that run's iterations, not "
        "between runs, which is often larger (on an H100 and an H200, unchanged runs of one "
        "program differed by up to 2.9%, and 22 and 24 of 24 unchanged pairs had intervals "
        "that missed 0: docs/analyses/diff.md, \"Validation\"); for a gate, give 3 runs or more "
        "per side, or a threshold above the runs' spread");
  }
  if (b.iterations == 0 || a.iterations == 0) {
    r.unavailable_reason = fmt::format(
        "iterations found: {} in the baseline, {} in the candidate (both need some; "
        "see --iterations)",
        b.iterations, a.iterations);
    if (options.threshold_pct.has_value()) r.threshold_pct = *options.threshold_pct;
    return r;
  }
  r.available = true;

  // The series: each part, then GPU work by range and by category, all GPU work, all idle.
  std::vector<PartSeries> series;
  std::map<std::string, size_t> range_series, category_series;
  std::vector<size_t> gpu_parts, idle_parts;
  for (size_t p = 0; p < num_parts; ++p) {
    PartSeries& s = series.emplace_back();
    s.out.key = parts[p].Key();
    s.out.label = parts[p].Label();
    s.out.kind = StepPart::KindName(parts[p].kind);
    s.out.range = parts[p].range;
    s.out.what = parts[p].what;
    s.members = {p};
    (parts[p].kind == StepPart::Kind::kGpu ? gpu_parts : idle_parts).push_back(p);
  }
  const size_t first_group = series.size();
  auto group = [&](std::map<std::string, size_t>& groups, const char* kind, const std::string& name,
                   std::string label, size_t p) {
    auto [it, inserted] = groups.try_emplace(name, 0);
    if (inserted) {
      it->second = series.size();
      PartSeries& s = series.emplace_back();
      s.out.key = fmt::format("{}\x1f{}", kind, name);
      s.out.label = std::move(label);
      s.out.kind = kind;
      (std::string_view(kind) == "range" ? s.out.range : s.out.what) = name;
    }
    series[it->second].members.push_back(p);
  };
  for (size_t p : gpu_parts) {
    group(range_series, "range", parts[p].range, fmt::format("`{}`", parts[p].range), p);
    group(category_series, "category", parts[p].what, parts[p].what, p);
  }
  auto total = [&](const char* key, const char* label, const std::vector<size_t>& members) {
    PartSeries& s = series.emplace_back();
    s.out.key = key;
    s.out.label = label;
    s.out.kind = "total";
    s.members = members;
    return series.size() - 1;
  };
  const size_t busy_series = total("total\x1fgpu_busy", "GPU busy", gpu_parts);
  const size_t idle_series = total("total\x1fgpu_idle", "GPU idle", idle_parts);

  // The data itself: the point estimates.
  Draw db, da;
  DrawSide(b, num_parts, nullptr, db);
  DrawSide(a, num_parts, nullptr, da);
  r.mean_before_ns = db.wall_mean;
  r.mean_after_ns = da.wall_mean;
  r.median_before_ns = DrawMedian(db.wall);
  r.median_after_ns = DrawMedian(da.wall);
  r.median_change_pct.value = ChangePct(r.median_before_ns, r.median_after_ns);
  r.mean_change_pct.value = ChangePct(r.mean_before_ns, r.mean_after_ns);
  r.launched_median_before_ns = DrawMedian(db.launched);
  r.launched_median_after_ns = DrawMedian(da.launched);
  r.launched_change_pct.value = ChangePct(r.launched_median_before_ns, r.launched_median_after_ns);
  for (PartSeries& s : series) {
    s.out.before_ns = s.Sum(db.part_mean);
    s.out.after_ns = s.Sum(da.part_mean);
    s.out.change_pct.value = ChangePct(s.out.before_ns, s.out.after_ns);
    s.out.points.value =
        r.mean_before_ns > 0 ? (s.out.after_ns - s.out.before_ns) / r.mean_before_ns * 100 : kNan;
    s.out.appeared = s.out.before_ns == 0 && s.out.after_ns > 0;
    s.out.vanished = s.out.before_ns > 0 && s.out.after_ns == 0;
  }

  // The draws: one generator, sides drawn in turn, so the same inputs give the same intervals.
  std::mt19937_64 rng(options.seed);
  const int draws = std::max(options.resamples, 0);
  std::vector<double> median_change, mean_change, launched_change;
  median_change.reserve(draws);
  mean_change.reserve(draws);
  for (PartSeries& s : series) {
    s.change.reserve(draws);
    s.points.reserve(draws);
  }
  for (int k = 0; k < draws; ++k) {
    DrawSide(b, num_parts, &rng, db);
    DrawSide(a, num_parts, &rng, da);
    median_change.push_back(ChangePct(DrawMedian(db.wall), DrawMedian(da.wall)));
    mean_change.push_back(ChangePct(db.wall_mean, da.wall_mean));
    launched_change.push_back(ChangePct(DrawMedian(db.launched), DrawMedian(da.launched)));
    for (PartSeries& s : series) {
      const double x = s.Sum(db.part_mean), y = s.Sum(da.part_mean);
      s.change.push_back(ChangePct(x, y));
      s.points.push_back(db.wall_mean > 0 ? (y - x) / db.wall_mean * 100 : kNan);
    }
  }
  const double alpha = 1 - options.confidence;
  auto interval = [&](const std::vector<double>& v, Estimate& e) {
    if (v.empty() || !std::isfinite(e.value)) return;
    e.lo = Quantile(v, alpha / 2);
    e.hi = Quantile(v, 1 - alpha / 2);
    if (!std::isfinite(e.lo) || !std::isfinite(e.hi)) e.lo = e.hi = kNan;
  };
  interval(median_change, r.median_change_pct);
  interval(mean_change, r.mean_change_pct);
  interval(launched_change, r.launched_change_pct);
  for (PartSeries& s : series) {
    interval(s.change, s.out.change_pct);
    interval(s.points, s.out.points);
  }

  // Between runs: resampling a few runs understates how far runs spread (three runs drawn with
  // replacement show two thirds of their variance, in a handful of patterns), so with several runs
  // on a side each interval also holds the estimate ± Student's t over the runs' own figures
  // (docs/analyses/diff.md, "Verdict": the false-alarm runs that showed it).
  if (r.runs_before + r.runs_after >= 3) {
    const PerRun pb = FiguresPerRun(b, num_parts), pa = FiguresPerRun(a, num_parts);
    const double c = options.confidence;
    Widen(r.median_change_pct,
          PercentOf(BetweenRunsHalfWidth(pb.median, pa.median, c), MeanOf(pb.median)));
    Widen(r.mean_change_pct, PercentOf(BetweenRunsHalfWidth(pb.mean, pa.mean, c), MeanOf(pb.mean)));
    Widen(r.launched_change_pct,
          PercentOf(BetweenRunsHalfWidth(pb.launched, pa.launched, c), MeanOf(pb.launched)));
    auto sums = [&](const PerRun& pr, const PartSeries& s) {
      std::vector<double> v;
      for (const std::vector<double>& m : pr.part_mean) v.push_back(s.Sum(m));
      return v;
    };
    for (PartSeries& s : series) {
      const std::vector<double> xb = sums(pb, s), xa = sums(pa, s);
      const double half = BetweenRunsHalfWidth(xb, xa, c);
      Widen(s.out.change_pct, PercentOf(half, MeanOf(xb)));
      Widen(s.out.points, PercentOf(half, r.mean_before_ns));
    }
    r.between_runs = true;
  }

  for (size_t i = 0; i < first_group; ++i) r.parts.push_back(std::move(series[i].out));
  for (const auto& [name, i] : range_series) r.ranges.push_back(std::move(series[i].out));
  for (const auto& [name, i] : category_series) r.categories.push_back(std::move(series[i].out));
  r.gpu_busy = std::move(series[busy_series].out);
  r.gpu_idle = std::move(series[idle_series].out);
  std::sort(r.parts.begin(), r.parts.end(), ByPoints);
  std::sort(r.ranges.begin(), r.ranges.end(), ByPoints);
  std::sort(r.categories.begin(), r.categories.end(), ByPoints);

  JudgeStepTime(r);
  Decide(options, r);
  MakeSentence(r, options.loop_label);
  return r;
}

}  // namespace sightline
