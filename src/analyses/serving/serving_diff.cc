#include "analyses/serving/serving_diff.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analyses/serving/serving_intervals.h"
#include "base/file_io.h"
#include "base/stats.h"
#include "importers/serving_results/request_log.h"

namespace sightline {

namespace {

struct Row {
  std::string metric;
  double before = 0, after = 0;
  bool latency = true;  // larger is worse; false: throughput, smaller is worse
  bool gated = false;
  ChangeInterval interval;  // of the change; NaN without per-request samples or runs
};

Value Num(double v) { return std::isfinite(v) ? Value(v) : Value(); }

double ChangeOf(double before, double after) {
  return before > 0 ? (after / before - 1) * 100 : std::nan("");
}

// Widens `iv` (around the change `c`) to also hold the change ± the spread between runs of the
// figure `of` (each run's own value), with 3 runs or more in all. On the log scale: tail
// percentiles of runs differ by factors, and a latency cannot fall by 100% or more.
template <typename Of>
void WidenByRuns(ChangeInterval& iv, double c, const std::vector<const ServingMetrics*>& before,
                 const std::vector<const ServingMetrics*>& after, Of of) {
  if (before.size() + after.size() < 3 || before.empty() || after.empty() || !std::isfinite(c) ||
      !(c > -100)) {
    return;
  }
  std::vector<double> xb, xa;
  for (const auto& [runs, logs] : {std::pair{&before, &xb}, std::pair{&after, &xa}}) {
    for (const ServingMetrics* m : *runs) {
      const double x = of(*m);
      if (!(x > 0) || !std::isfinite(x)) return;
      logs->push_back(std::log(x));
    }
  }
  const double half = BetweenRunsHalfWidth(xb, xa, 0.95);
  if (!std::isfinite(half)) return;
  const double center = std::log1p(c / 100);
  const double lo = std::expm1(center - half) * 100, hi = std::expm1(center + half) * 100;
  const bool had = std::isfinite(iv.lo) && std::isfinite(iv.hi);
  iv.lo = had ? std::min(iv.lo, lo) : lo;
  iv.hi = had ? std::max(iv.hi, hi) : hi;
}

}  // namespace

RequestResults PoolServingRuns(std::vector<RequestResults> runs) {
  RequestResults pooled;
  if (runs.empty()) return pooled;
  pooled.path = runs[0].path;
  pooled.format = runs[0].format;
  pooled.producer = runs[0].producer;
  pooled.ttft_from = runs[0].ttft_from;
  pooled.has_start_times = false;  // the runs' clocks are not one timeline
  for (RequestResults& r : runs) {
    pooled.duration_s += r.duration_s;
    pooled.latency_from_chunks = pooled.latency_from_chunks || r.latency_from_chunks;
    for (RequestRecord& q : r.requests) pooled.requests.push_back(std::move(q));
  }
  return pooled;
}

void AddServingDiff(const ServingMetrics& b, const ServingMetrics& a,
                    std::optional<double> fail_if_slower_pct, Report& report) {
  AddServingDiffRuns(b, {}, a, {}, fail_if_slower_pct, report);
}

void AddServingDiffRuns(const ServingMetrics& b, const std::vector<ServingMetrics>& runs_b,
                        const ServingMetrics& a, const std::vector<ServingMetrics>& runs_a,
                        std::optional<double> fail_if_slower_pct, Report& report) {
  std::vector<const ServingMetrics*> rb, ra;
  for (const ServingMetrics& m : runs_b) rb.push_back(&m);
  for (const ServingMetrics& m : runs_a) ra.push_back(&m);
  if (rb.empty()) rb.push_back(&b);
  if (ra.empty()) ra.push_back(&a);
  const bool between_runs = rb.size() + ra.size() >= 3;
  std::vector<Row> rows;
  auto latency = [&](const char* name, LatencyStats ServingMetrics::*stats,
                     ServingSamples::Metric ServingSamples::*samples) {
    const LatencyStats &x = b.*stats, &y = a.*stats;
    std::vector<ChangeInterval> iv = PercentileChangeIntervals(
        b.samples, b.samples.*samples, a.samples, a.samples.*samples, {50, 90, 99});
    const double LatencyStats::*pct[] = {&LatencyStats::p50_ns, &LatencyStats::p90_ns,
                                         &LatencyStats::p99_ns};
    const char* label[] = {"p50", "p90", "p99"};
    for (int j = 0; j < 3; ++j) {
      const double before = x.*pct[j], after = y.*pct[j];
      WidenByRuns(iv[j], ChangeOf(before, after), rb, ra,
                  [&](const ServingMetrics& m) { return (m.*stats).*pct[j]; });
      rows.push_back({fmt::format("{} {}", name, label[j]), before, after, true, j == 2, iv[j]});
    }
  };
  latency("TTFT", &ServingMetrics::ttft, &ServingSamples::ttft);
  latency("TPOT", &ServingMetrics::tpot, &ServingSamples::tpot);
  latency("ITL", &ServingMetrics::itl, &ServingSamples::itl);
  latency("E2EL", &ServingMetrics::e2el, &ServingSamples::e2el);
  rows.back().gated = false;  // E2EL follows TTFT, TPOT and the output length
  Section& s = report.AddSection("serving_diff", "Serving: candidate against baseline", -1);
  s.AddFact("completed_before", "Completed (baseline)", b.completed, Unit::kCount);
  s.AddFact("completed_after", "Completed (candidate)", a.completed, Unit::kCount);
  Table& t = s.AddTable("latency", "Latency",
                        {{"metric", "Metric", Unit::kText},
                         {"before_ns", "Before", Unit::kDurationNs},
                         {"after_ns", "After", Unit::kDurationNs},
                         {"change_pct", "Change", Unit::kPercent},
                         {"change_low_pct", "Low", Unit::kPercent},
                         {"change_high_pct", "High", Unit::kPercent},
                         {"gated", "Gated", Unit::kText}});
  for (const Row& r : rows) {
    const double c = ChangeOf(r.before, r.after);
    const bool interval = std::isfinite(c) && std::isfinite(r.interval.lo);
    t.rows.push_back({r.metric, Num(r.before), Num(r.after), Num(c),
                      interval ? Num(r.interval.lo) : Value(),
                      interval ? Num(r.interval.hi) : Value(), std::string(r.gated ? "yes" : "")});
  }
  Table& th = s.AddTable("throughput", "Throughput (per second)",
                         {{"metric", "Metric", Unit::kText},
                          {"before", "Before", Unit::kNumber},
                          {"after", "After", Unit::kNumber},
                          {"change_pct", "Change", Unit::kPercent},
                          {"change_low_pct", "Low", Unit::kPercent},
                          {"change_high_pct", "High", Unit::kPercent},
                          {"gated", "Gated", Unit::kText}});
  Row output{"output tokens/s", b.output_throughput, a.output_throughput, false, true, {}};
  Row requests{"requests/s", b.request_throughput, a.request_throughput, false, false, {}};
  WidenByRuns(output.interval, ChangeOf(output.before, output.after), rb, ra,
              [](const ServingMetrics& m) { return m.output_throughput; });
  WidenByRuns(requests.interval, ChangeOf(requests.before, requests.after), rb, ra,
              [](const ServingMetrics& m) { return m.request_throughput; });
  for (const Row& r : {output, requests}) {
    const double c = ChangeOf(r.before, r.after);
    const bool interval = std::isfinite(c) && std::isfinite(r.interval.lo);
    th.rows.push_back({r.metric, Num(r.before), Num(r.after), Num(c),
                       interval ? Num(r.interval.lo) : Value(),
                       interval ? Num(r.interval.hi) : Value(), std::string(r.gated ? "yes" : "")});
  }
  t.note = fmt::format(
      "Low, High: 95% interval of the change (requests resampled, fixed seed{}); the gate "
      "(--fail-if-slower PCT) reads the interval of the rows marked gated (the change where a "
      "row has none)",
      between_runs ? fmt::format("; each widened to hold the spread between the {} + {} runs, "
                                 "Student's t over each run's own figure",
                                 rb.size(), ra.size())
                   : "");
  s.AddFact("runs_before", "Runs (baseline)", static_cast<int64_t>(rb.size()), Unit::kCount);
  s.AddFact("runs_after", "Runs (candidate)", static_cast<int64_t>(ra.size()), Unit::kCount);
  if (!between_runs) {
    s.notes.push_back(
        "one run on each side: the intervals hold the spread between that run's requests, not "
        "between runs, which is often far larger for tail percentiles (unchanged runs of the "
        "serving loop on an H100 differed in TTFT p99 by up to +380%, with intervals that missed "
        "0: docs/analyses/serving.md, \"Diff\"); for a gate, give 3 runs or more per side");
  }
  if (!fail_if_slower_pct) return;
  const double limit = *fail_if_slower_pct;
  Section& g = report.AddSection("serving_gate", "Gate (--fail-if-slower)", -1);
  g.AddFact("threshold_pct", "Fails when a gated figure worsens by more than", limit,
            Unit::kPercent);
  // Each gated figure: worse beyond the threshold (its whole interval above it, or its change
  // where it has no interval), straddling it (cannot tell), or at or below it.
  std::vector<std::string> worse, straddling;
  double factor = 0;  // how many times the requests would make every straddling interval clear
  auto check = [&](const Row& r) {
    if (!r.gated || !(r.before > 0)) return;
    const double c = ChangeOf(r.before, r.after);
    if (!std::isfinite(c)) return;
    const bool interval = std::isfinite(r.interval.lo) && std::isfinite(r.interval.hi);
    const double by = r.latency ? c : -c;  // how much worse
    if (!interval) {
      if (by > limit) worse.push_back(fmt::format("{} {:+.1f}%", r.metric, c));
      return;
    }
    const std::string what =
        fmt::format("{} {:+.1f}% [{:+.1f}, {:+.1f}]", r.metric, c, r.interval.lo, r.interval.hi);
    // The interval of "how much worse": the change's, turned around for a throughput.
    const double lo = r.latency ? r.interval.lo : -r.interval.hi;
    const double hi = r.latency ? r.interval.hi : -r.interval.lo;
    if (lo > limit) {
      worse.push_back(what);
    } else if (hi > limit) {
      straddling.push_back(what);
      // The interval's half on the threshold's side shrinks as 1/sqrt(requests).
      const double half = by >= limit ? by - lo : hi - by;
      const double distance = std::abs(by - limit);
      factor = distance > 1e-9 && half > 0 && factor >= 0
                   ? std::max(factor, (half / distance) * (half / distance))
                   : -1;
    }
  };
  for (const Row& r : rows) check(r);
  check(output);
  const char* result = !worse.empty() ? "FAIL" : !straddling.empty() ? "cannot tell" : "pass";
  g.AddFact("result", "Result", std::string(result));
  // With several runs per side the runs decide (their spread is the wider term); else requests.
  const int64_t units = between_runs ? static_cast<int64_t>(std::max(rb.size(), ra.size()))
                                     : std::min(b.completed, a.completed);
  constexpr double kMaxFactor = 100;  // beyond: the estimate sits on the threshold; no plan
  const bool can_say = !straddling.empty() && factor > 0 && factor <= kMaxFactor && units > 0;
  const int64_t to_decide =
      can_say ? static_cast<int64_t>(std::ceil(static_cast<double>(units) * factor)) : 0;
  if (worse.empty() && straddling.empty()) return;
  if (!worse.empty()) {
    g.notes.push_back("worse than allowed: " + fmt::format("{}", fmt::join(worse, "; ")));
    report.gate.failed = true;
    report.gate.message = fmt::format("serving figures worse than allowed (+{:.1f}%): {}", limit,
                                      fmt::join(worse, "; "));
    return;
  }
  if (to_decide > 0) {
    if (between_runs) {
      g.AddFact("runs_to_decide", "Runs per side that would likely decide", to_decide,
                Unit::kCount);
    } else {
      g.AddFact("requests_to_decide", "Requests per run that would likely decide", to_decide,
                Unit::kCount);
    }
  }
  std::string message =
      fmt::format("cannot tell: the 95% interval{} of {} straddle{} the threshold (+{:.1f}%)",
                  straddling.size() == 1 ? "" : "s", fmt::join(straddling, "; "),
                  straddling.size() == 1 ? "s" : "", limit);
  if (to_decide > 0) {
    message +=
        between_runs
            ? fmt::format("; about {} runs per side would likely decide", to_decide)
            : fmt::format("; about {} completed requests per run would likely decide", to_decide);
  }
  g.notes.push_back(message);
  report.gate.undecided = true;
  report.gate.message = std::move(message);
}

}  // namespace sightline
