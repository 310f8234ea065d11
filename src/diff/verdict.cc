#include "diff/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <unordered_map>

#include "base/stats.h"
#include "diff/verdict_decision.h"

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

  verdict::JudgeStepTime(r);
  verdict::Decide(options, r);
  verdict::MakeSentence(r, options.loop_label);
  return r;
}

}  // namespace sightline
