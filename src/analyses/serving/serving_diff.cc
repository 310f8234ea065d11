#include "analyses/serving/serving_diff.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analyses/serving/serving_intervals.h"
#include "base/file_io.h"
#include "importers/serving_results/request_log.h"

namespace sightline {

namespace {

struct Row {
  std::string metric;
  double before = 0, after = 0;
  bool latency = true;  // larger is worse; false: throughput, smaller is worse
  bool gated = false;
  ChangeInterval interval;  // of the change; NaN without per-request samples
};

Value Num(double v) { return std::isfinite(v) ? Value(v) : Value(); }

}  // namespace

void AddServingDiff(const ServingMetrics& b, const ServingMetrics& a,
                    std::optional<double> fail_if_slower_pct, Report& report) {
  std::vector<Row> rows;
  auto latency = [&](const char* name, const LatencyStats& x, const LatencyStats& y,
                     const ServingSamples::Metric& sx, const ServingSamples::Metric& sy) {
    const std::vector<ChangeInterval> iv =
        PercentileChangeIntervals(b.samples, sx, a.samples, sy, {50, 90, 99});
    rows.push_back({fmt::format("{} p50", name), x.p50_ns, y.p50_ns, true, false, iv[0]});
    rows.push_back({fmt::format("{} p90", name), x.p90_ns, y.p90_ns, true, false, iv[1]});
    rows.push_back({fmt::format("{} p99", name), x.p99_ns, y.p99_ns, true, true, iv[2]});
  };
  latency("TTFT", b.ttft, a.ttft, b.samples.ttft, a.samples.ttft);
  latency("TPOT", b.tpot, a.tpot, b.samples.tpot, a.samples.tpot);
  latency("ITL", b.itl, a.itl, b.samples.itl, a.samples.itl);
  latency("E2EL", b.e2el, a.e2el, b.samples.e2el, a.samples.e2el);
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
  auto change = [](double before, double after) {
    return before > 0 ? (after / before - 1) * 100 : std::nan("");
  };
  for (const Row& r : rows) {
    const double c = change(r.before, r.after);
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
                          {"gated", "Gated", Unit::kText}});
  const Row output{"output tokens/s", b.output_throughput, a.output_throughput, false, true, {}};
  const Row requests{"requests/s", b.request_throughput, a.request_throughput, false, false, {}};
  for (const Row& r : {output, requests}) {
    th.rows.push_back({r.metric, Num(r.before), Num(r.after), Num(change(r.before, r.after)),
                       std::string(r.gated ? "yes" : "")});
  }
  t.note =
      "Low, High: 95% interval of the change (requests resampled, fixed seed); the gate "
      "(--fail-if-slower PCT) reads the interval of the rows marked gated (the change where a "
      "row has none)";
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
    const double c = change(r.before, r.after);
    if (!std::isfinite(c)) return;
    const bool interval = std::isfinite(r.interval.lo) && std::isfinite(r.interval.hi);
    if (!interval) {
      const double by = r.latency ? c : -c;
      if (by > limit) worse.push_back(fmt::format("{} {:+.1f}%", r.metric, c));
      return;
    }
    const std::string what =
        fmt::format("{} {:+.1f}% [{:+.1f}, {:+.1f}]", r.metric, c, r.interval.lo, r.interval.hi);
    if (r.interval.lo > limit) {
      worse.push_back(what);
    } else if (r.interval.hi > limit) {
      straddling.push_back(what);
      // The interval's half on the threshold's side shrinks as 1/sqrt(requests).
      const double half = c >= limit ? c - r.interval.lo : r.interval.hi - c;
      const double distance = std::abs(c - limit);
      factor = distance > 1e-9 && half > 0 && factor >= 0
                   ? std::max(factor, (half / distance) * (half / distance))
                   : -1;
    }
  };
  for (const Row& r : rows) check(r);
  check(output);
  const char* result = !worse.empty() ? "FAIL" : !straddling.empty() ? "cannot tell" : "pass";
  g.AddFact("result", "Result", std::string(result));
  const int64_t completed = std::min(b.completed, a.completed);
  constexpr double kMaxFactor = 1e6;
  const bool can_say = straddling.empty() || (factor > 0 && factor <= kMaxFactor && completed > 0);
  const int64_t to_decide =
      can_say && !straddling.empty()
          ? static_cast<int64_t>(std::ceil(static_cast<double>(completed) * factor))
          : 0;
  if (worse.empty() && straddling.empty()) return;
  if (!worse.empty()) {
    g.notes.push_back("worse than allowed: " + fmt::format("{}", fmt::join(worse, "; ")));
    report.gate.failed = true;
    report.gate.message = fmt::format("serving figures worse than allowed (+{:.1f}%): {}", limit,
                                      fmt::join(worse, "; "));
    return;
  }
  if (to_decide > 0) {
    g.AddFact("requests_to_decide", "Requests per run that would likely decide", to_decide,
              Unit::kCount);
  }
  std::string message =
      fmt::format("cannot tell: the 95% interval{} of {} straddle{} the threshold (+{:.1f}%)",
                  straddling.size() == 1 ? "" : "s", fmt::join(straddling, "; "),
                  straddling.size() == 1 ? "s" : "", limit);
  if (to_decide > 0) {
    message += fmt::format("; about {} completed requests per run would likely decide", to_decide);
  }
  g.notes.push_back(message);
  report.gate.undecided = true;
  report.gate.message = std::move(message);
}

}  // namespace sightline
