#include "analyses/serving/serving_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analyses/serving/serving_charts.h"
#include "base/stats.h"
#include "base/time_units.h"

namespace sightline {
namespace {

constexpr double kNsPerSecond = 1e9;

// The sorted values of each metric, in ns, for the statistics and the client's percentiles.
struct Samples {
  std::vector<double> ttft, tpot, itl, e2el, queue;
};

double Stat(const std::vector<double>& sorted, std::string_view stat, bool* known) {
  *known = true;
  if (stat == "mean" || stat == "std" || stat == "median" || stat == "max") {
    const LatencyStats s = ComputeLatencyStats(sorted);
    return stat == "mean"  ? s.mean_ns
           : stat == "std" ? s.std_ns
           : stat == "max" ? s.max_ns
                           : s.p50_ns;
  }
  if (stat.size() > 1 && stat[0] == 'p') {  // "p99", "p99.9"
    double p = 0;
    try {
      size_t used = 0;
      p = std::stod(std::string(stat.substr(1)), &used);
      if (used != stat.size() - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      *known = false;
      return 0;
    }
    if (p >= 0 && p <= 100) return PercentileOfSorted(sorted, p);
  }
  *known = false;
  return 0;
}

bool Close(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

}  // namespace

LatencyStats ComputeLatencyStats(std::vector<double> v) {
  LatencyStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.n = static_cast<int64_t>(v.size());
  long double sum = 0;
  for (double x : v) sum += x;
  s.mean_ns = static_cast<double>(sum / v.size());
  long double sq = 0;
  for (double x : v) sq += (x - s.mean_ns) * (x - s.mean_ns);
  s.std_ns = std::sqrt(static_cast<double>(sq / v.size()));  // population, as np.std
  s.min_ns = v.front();
  s.max_ns = v.back();
  s.p50_ns = PercentileOfSorted(v, 50);
  s.p90_ns = PercentileOfSorted(v, 90);
  s.p95_ns = PercentileOfSorted(v, 95);
  s.p99_ns = PercentileOfSorted(v, 99);
  s.p999_ns = PercentileOfSorted(v, 99.9);
  return s;
}

StatusOr<SloOptions> ParseSlo(std::string_view text) {
  SloOptions slo;
  std::string s(text);
  std::replace(s.begin(), s.end(), ' ', ',');
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t end = std::min(s.find(',', pos), s.size());
    const std::string part = s.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty()) continue;
    const size_t eq = part.find_first_of("=:");
    const std::string name = part.substr(0, eq);
    double ms = -1;
    if (eq != std::string::npos) {
      try {
        size_t used = 0;
        ms = std::stod(part.substr(eq + 1), &used);
        if (used != part.size() - eq - 1) ms = -1;
      } catch (const std::exception&) {
        ms = -1;
      }
    }
    if (ms < 0 || !std::isfinite(ms)) {
      return InvalidArgumentError(fmt::format(
          "--slo: '{}' is not NAME=MILLISECONDS with a non-negative number, e.g. ttft=300", part));
    }
    if (name == "ttft") {
      slo.ttft_ms = ms;
    } else if (name == "tpot") {
      slo.tpot_ms = ms;
    } else if (name == "e2el") {
      slo.e2el_ms = ms;
    } else {
      return InvalidArgumentError(
          fmt::format("--slo: unknown objective '{}'; use ttft, tpot or e2el", name));
    }
  }
  if (!slo.any()) return InvalidArgumentError("--slo: no objective given, e.g. ttft=300,tpot=40");
  return slo;
}

StatusOr<ServingMetrics> ComputeServingMetrics(const RequestResults& results,
                                               const ServingMetricsOptions& options) {
  if (results.aggregates_only) {
    return InvalidInputError(fmt::format(
        "{}: {} holds aggregates only, no per-request records: Sightline shows them (analyze "
        "--requests) but cannot recompute or compare serving metrics from it",
        results.path, results.format));
  }
  if (!(results.duration_s > 0)) {
    return InvalidInputError(
        fmt::format("{}: the benchmark duration is not positive", results.path));
  }
  ServingMetrics m;
  m.duration_s = results.duration_s;
  m.requests = static_cast<int64_t>(results.requests.size());
  m.slo_set = options.slo.any();
  Samples x;
  std::vector<std::pair<double, uint32_t>> kept_ttft, kept_tpot, kept_itl, kept_e2el;
  for (const RequestRecord& q : results.requests) {
    if (!q.success) {
      ++m.failed;
      continue;
    }
    // A last token before the first is an impossible ordering: counted, never averaged in (its
    // TPOT would be negative).
    if (q.latency_s < q.ttft_s) {
      ++m.impossible;
      continue;
    }
    ++m.completed;
    if (__builtin_add_overflow(m.input_tokens, q.input_tokens, &m.input_tokens) ||
        __builtin_add_overflow(m.output_tokens, q.output_tokens, &m.output_tokens)) {
      return InvalidInputError(fmt::format(
          "{}: the requests' token counts add up to more than 2^63 (request {}: {} input, {} "
          "output tokens); the file cannot be right",
          results.path, q.id.empty() ? std::to_string(&q - results.requests.data()) : q.id,
          q.input_tokens, q.output_tokens));
    }
    // The same values as below, each with its request, for the diff's intervals.
    const uint32_t owner = m.samples.requests++;
    kept_ttft.push_back({q.ttft_s * kNsPerSecond, owner});
    kept_e2el.push_back({q.latency_s * kNsPerSecond, owner});
    if (q.output_tokens > 1) {
      kept_tpot.push_back(
          {(q.latency_s - q.ttft_s) / static_cast<double>(q.output_tokens - 1) * kNsPerSecond,
           owner});
    }
    for (double g : q.itl_s) kept_itl.push_back({g * kNsPerSecond, owner});
    x.ttft.push_back(q.ttft_s * kNsPerSecond);
    if (q.queue_s >= 0) x.queue.push_back(q.queue_s * kNsPerSecond);
    m.preemptions += q.preemptions;
    x.e2el.push_back(q.latency_s * kNsPerSecond);
    // TPOT: the decode time per token after the first; 0 for a one-token answer, which counts for
    // the SLO check but not in the statistics (as vLLM).
    double tpot_s = 0;
    if (q.output_tokens > 1) {
      tpot_s = (q.latency_s - q.ttft_s) / static_cast<double>(q.output_tokens - 1);
      x.tpot.push_back(tpot_s * kNsPerSecond);
    }
    for (double g : q.itl_s) x.itl.push_back(g * kNsPerSecond);
    if (m.slo_set) {
      const SloOptions& slo = options.slo;
      const bool good = (!slo.ttft_ms || *slo.ttft_ms / 1e3 >= q.ttft_s) &&
                        (!slo.tpot_ms || *slo.tpot_ms / 1e3 >= tpot_s) &&
                        (!slo.e2el_ms || *slo.e2el_ms / 1e3 >= q.latency_s);
      m.good_requests += good;
    }
  }
  for (std::vector<double>* v : {&x.ttft, &x.tpot, &x.itl, &x.e2el})
    std::sort(v->begin(), v->end());
  auto keep = [](std::vector<std::pair<double, uint32_t>>& v, ServingSamples::Metric& out) {
    std::sort(v.begin(), v.end());
    out.sorted_ns.reserve(v.size());
    out.request.reserve(v.size());
    for (const auto& [value, owner] : v) {
      out.sorted_ns.push_back(value);
      out.request.push_back(owner);
    }
  };
  keep(kept_ttft, m.samples.ttft);
  keep(kept_tpot, m.samples.tpot);
  keep(kept_itl, m.samples.itl);
  keep(kept_e2el, m.samples.e2el);
  m.ttft = ComputeLatencyStats(x.ttft);
  m.tpot = ComputeLatencyStats(x.tpot);
  m.itl = ComputeLatencyStats(x.itl);
  m.e2el = ComputeLatencyStats(x.e2el);
  m.queue = ComputeLatencyStats(x.queue);
  m.request_throughput = static_cast<double>(m.completed) / m.duration_s;
  m.output_throughput = static_cast<double>(m.output_tokens) / m.duration_s;
  m.total_token_throughput =
      (static_cast<double>(m.input_tokens) + static_cast<double>(m.output_tokens)) / m.duration_s;
  if (m.slo_set) {
    m.goodput = static_cast<double>(m.good_requests) / m.duration_s;
    m.slo_attainment_pct =
        m.requests > 0 ? 100.0 * static_cast<double>(m.good_requests) / m.requests : 0;
  }

  // Steady state: active requests over time (completed ones, [start, start + E2EL)).
  {
    std::vector<std::pair<double, int>> events;
    for (const RequestRecord& q : results.requests) {
      if (!q.success) continue;
      events.push_back({q.start_s, +1});
      events.push_back({q.start_s + q.latency_s, -1});
    }
    std::sort(events.begin(), events.end());  // at equal times, -1 before +1
    int64_t active = 0, peak = 0;
    for (const auto& [t, d] : events) peak = std::max(peak, active += d);
    SteadyState& st = m.steady;
    st.peak_active = peak;
    st.threshold = static_cast<int64_t>(std::ceil(0.9 * static_cast<double>(peak)));
    if (peak >= 2 && results.has_start_times) {
      active = 0;
      double open = -1, best = -1;
      for (size_t i = 0; i < events.size(); ++i) {
        active += events[i].second;
        const bool last_at_time = i + 1 == events.size() || events[i + 1].first != events[i].first;
        if (!last_at_time) continue;
        if (active >= st.threshold && open < 0) open = events[i].first;
        if (active < st.threshold && open >= 0) {
          if (events[i].first - open > best) {
            best = events[i].first - open;
            st.start_s = open;
            st.end_s = events[i].first;
          }
          open = -1;
        }
      }
      st.found = best > 0;
    }
    if (st.found) {
      std::vector<double> ttft, itl;
      int64_t tokens = 0;
      for (const RequestRecord& q : results.requests) {
        if (!q.success) continue;
        if (q.start_s >= st.start_s && q.start_s < st.end_s) {
          ++st.requests;
          ttft.push_back(q.ttft_s * kNsPerSecond);
        }
        double t = q.start_s + q.ttft_s;  // the first chunk
        const int64_t first_tokens = q.itl_s.empty() ? q.output_tokens : 1;
        if (t >= st.start_s && t < st.end_s) tokens += first_tokens;
        for (double g : q.itl_s) {
          t += g;
          if (t >= st.start_s && t < st.end_s) {
            itl.push_back(g * kNsPerSecond);
            ++tokens;  // one token per chunk after the first (per-chunk counts are not kept)
          }
        }
      }
      st.ttft = ComputeLatencyStats(ttft);
      st.itl = ComputeLatencyStats(itl);
      st.output_throughput = static_cast<double>(tokens) / (st.end_s - st.start_s);
    }
  }

  // Prefill interference: which ITL gaps span an iteration that ran some request's prefill.
  if (!results.prefill_iterations.empty()) {
    const std::vector<int64_t>& prefills = results.prefill_iterations;
    std::vector<std::pair<double, bool>> gaps;  // (ns, spans a prefill)
    for (const RequestRecord& q : results.requests) {
      if (!q.success || q.chunk_iterations.size() != q.itl_s.size() + 1) continue;
      for (size_t i = 0; i < q.itl_s.size(); ++i) {
        const int64_t a = q.chunk_iterations[i], b = q.chunk_iterations[i + 1];
        auto p = std::upper_bound(prefills.begin(), prefills.end(), a);
        gaps.push_back({q.itl_s[i] * kNsPerSecond, p != prefills.end() && *p <= b});
      }
    }
    if (!gaps.empty()) {
      PrefillInterference& pi = m.prefill;
      pi.known = true;
      std::vector<double> with, without;
      for (const auto& [ns, spans] : gaps) (spans ? with : without).push_back(ns);
      pi.with_prefill = ComputeLatencyStats(with);
      pi.without = ComputeLatencyStats(without);
      const double p99 = m.itl.p99_ns;
      for (const auto& [ns, spans] : gaps) {
        if (ns < p99) continue;
        ++pi.tail_gaps;
        pi.tail_gaps_with_prefill += spans;
      }
      pi.typical_ns = pi.without.n > 0 ? pi.without.p50_ns : 0;
      std::vector<double> over;
      for (double ns : with) over.push_back(std::max(0.0, ns - pi.typical_ns));
      pi.prefill_cost_ns = Median(over);
      for (double x : over) pi.excess_ns += std::min(x, pi.prefill_cost_ns);
      const double stall = 10 * pi.typical_ns + pi.prefill_cost_ns;
      for (const auto& [ns, spans] : gaps) {
        if (pi.typical_ns > 0 && ns >= stall) ++pi.stalls, pi.stall_ns += ns;
      }
    }
  }

  // The client's own figures, recomputed: "<stat>_<metric>_ms" and the throughputs.
  const std::map<std::string_view, const std::vector<double>*> by_metric = {
      {"ttft", &x.ttft}, {"tpot", &x.tpot}, {"itl", &x.itl}, {"e2el", &x.e2el}};
  for (const auto& [key, reported] : results.reported) {
    double computed = 0;
    bool known = false;
    if (key == "request_throughput") {
      computed = m.request_throughput, known = true;
    } else if (key == "output_throughput") {
      computed = m.output_throughput, known = true;
    } else if (key == "total_token_throughput") {
      computed = m.total_token_throughput, known = true;
    } else if (key == "duration") {  // the benchmark's window, s (AIPerf's benchmark_duration)
      computed = m.duration_s, known = true;
    } else if (key == "request_goodput") {
      computed = m.goodput, known = m.slo_set;  // only against the same SLOs
    } else if (key.size() > 3) {
      const std::string_view body = std::string_view(key).substr(0, key.size() - 3);  // no "_ms"
      const size_t us = body.rfind('_');
      if (us != std::string_view::npos) {
        auto metric = by_metric.find(body.substr(us + 1));
        if (metric != by_metric.end()) {
          computed = Stat(*metric->second, body.substr(0, us), &known) / 1e6;  // ns -> ms
        }
      }
    }
    if (!known) continue;
    ReportedCheck& c = m.checks.emplace_back();
    c.key = key;
    c.reported = reported;
    c.computed = computed;
    c.match = Close(computed, reported);
    m.mismatches += !c.match;
  }
  return m;
}

void AddServingSection(const RequestResults& results, const ServingMetrics& m, Report& report) {
  Section& s = report.AddSection("serving", "Serving: requests, latency, throughput", -1);
  s.AddFact("source", "Results", fmt::format("{} ({})", results.path, results.producer));
  s.AddFact("requests", "Requests sent", m.requests, Unit::kCount);
  s.AddFact("completed", "Completed", m.completed, Unit::kCount);
  s.AddFact("failed", "Failed", m.failed, Unit::kCount);
  s.AddFact("duration_ns", "Benchmark duration", m.duration_s * kNsPerSecond, Unit::kDurationNs);
  s.AddFact("input_tokens", "Input tokens (completed)", m.input_tokens, Unit::kCount);
  s.AddFact("output_tokens", "Output tokens (completed)", m.output_tokens, Unit::kCount);
  s.AddFact("request_throughput_per_s", "Request throughput (req/s)", m.request_throughput,
            Unit::kNumber);
  s.AddFact("output_throughput_per_s", "Output token throughput (tok/s)", m.output_throughput,
            Unit::kNumber);
  s.AddFact("total_token_throughput_per_s", "Total token throughput (tok/s)",
            m.total_token_throughput, Unit::kNumber);
  if (m.slo_set) {
    s.AddFact("good_requests", "Requests meeting every SLO", m.good_requests, Unit::kCount);
    s.AddFact("goodput_per_s", "Goodput (req/s)", m.goodput, Unit::kNumber);
    s.AddFact("slo_attainment_pct", "SLO attainment (of requests sent)", m.slo_attainment_pct,
              Unit::kPercent);
  }
  Table& t = s.AddTable("latency", "Latency per request (ITL: per gap)",
                        {{"metric", "Metric", Unit::kText},
                         {"n", "N", Unit::kCount},
                         {"mean_ns", "Mean", Unit::kDurationNs},
                         {"std_ns", "Std", Unit::kDurationNs},
                         {"min_ns", "Min", Unit::kDurationNs},
                         {"p50_ns", "P50", Unit::kDurationNs},
                         {"p90_ns", "P90", Unit::kDurationNs},
                         {"p95_ns", "P95", Unit::kDurationNs},
                         {"p99_ns", "P99", Unit::kDurationNs},
                         {"p99_9_ns", "P99.9", Unit::kDurationNs},
                         {"max_ns", "Max", Unit::kDurationNs}});
  auto row = [&t](const char* name, const LatencyStats& l) {
    if (l.n == 0) {  // no value: absent ("-", null), never a 0 ns that reads as a perfect run
      t.rows.push_back({std::string(name), l.n, Value(), Value(), Value(), Value(), Value(),
                        Value(), Value(), Value(), Value()});
      return;
    }
    t.rows.push_back({std::string(name), l.n, l.mean_ns, l.std_ns, l.min_ns, l.p50_ns, l.p90_ns,
                      l.p95_ns, l.p99_ns, l.p999_ns, l.max_ns});
  };
  row("TTFT", m.ttft);
  row("TPOT", m.tpot);
  row("ITL", m.itl);
  row("E2EL", m.e2el);
  if (m.queue.n > 0) row("Queue", m.queue);
  if (m.steady.found) {
    row("TTFT steady", m.steady.ttft);
    row("ITL steady", m.steady.itl);
    s.AddFact("steady_state_ns", "Steady state (>= 90% of peak concurrency)",
              (m.steady.end_s - m.steady.start_s) * kNsPerSecond, Unit::kDurationNs);
    s.AddFact("steady_state_concurrency", "Concurrency there (peak)",
              fmt::format(">= {} ({})", m.steady.threshold, m.steady.peak_active));
    s.AddFact("steady_state_output_throughput_per_s", "Output token throughput there (tok/s)",
              m.steady.output_throughput, Unit::kNumber);
  }
  t.note = fmt::format(
      "TTFT from {} to its first token; TPOT = (E2EL - TTFT) / (output tokens - 1), requests "
      "with more than one output token; ITL = each gap between streamed chunks; E2EL = to the "
      "last token{}; steady = inside the steady state (TTFT: requests that started there; ITL: "
      "gaps "
      "ending there). Completed requests only. Std is the population standard deviation and "
      "percentiles interpolate linearly (numpy's defaults, as the benchmark clients).",
      results.ttft_from.empty() ? "the request's start" : results.ttft_from,
      m.queue.n > 0 ? "; Queue = received to first scheduled" : "");
  if (m.preemptions > 0) {
    s.AddFact("preemptions", "Preemptions (completed requests)", m.preemptions, Unit::kCount);
  }
  if (!m.checks.empty()) {
    Table& c = s.AddTable("client_check", "The client's own figures, recomputed",
                          {{"key", "Client key", Unit::kText},
                           {"reported", "Client", Unit::kNumber},
                           {"computed", "Sightline", Unit::kNumber},
                           {"match", "Match", Unit::kText}});
    for (const ReportedCheck& k : m.checks) {
      c.rows.push_back({k.key, k.reported, k.computed, std::string(k.match ? "yes" : "NO")});
    }
    c.note = m.mismatches == 0
                 ? fmt::format("all {} agree (within 1e-6 relative)", m.checks.size())
                 : fmt::format(
                       "{} of {} differ: the file's per-request lists do not give the "
                       "client's aggregates (edited file, or another client version)",
                       m.mismatches, m.checks.size());
  }
  if (m.prefill.known) {
    const PrefillInterference& pi = m.prefill;
    Table& p =
        s.AddTable("itl_by_prefill", "ITL gaps that span a prefill iteration, and the others",
                   {{"gaps", "Gaps", Unit::kText},
                    {"n", "N", Unit::kCount},
                    {"p50_ns", "P50", Unit::kDurationNs},
                    {"p90_ns", "P90", Unit::kDurationNs},
                    {"p99_ns", "P99", Unit::kDurationNs},
                    {"max_ns", "Max", Unit::kDurationNs}});
    for (const auto& [name, l] :
         {std::pair<const char*, const LatencyStats*>{"spanning a prefill", &pi.with_prefill},
          {"decode only", &pi.without}}) {
      p.rows.push_back({std::string(name), l->n, l->p50_ns, l->p90_ns, l->p99_ns, l->max_ns});
    }
    p.note = fmt::format(
        "a prefill (a request's first scheduling in the request log) in the gap's iterations adds "
        "{} to a typical decode gap of {} (medians); {} of the {} gaps at or above the ITL p99 "
        "span "
        "a prefill",
        FormatDuration(static_cast<DurationNs>(pi.prefill_cost_ns)),
        FormatDuration(static_cast<DurationNs>(pi.typical_ns)), pi.tail_gaps_with_prefill,
        pi.tail_gaps);
    if (pi.stalls > 0) {
      s.notes.push_back(fmt::format(
          "{} ITL gaps took at least 10x a decode gap plus a prefill ({} in total): stalls a "
          "prefill "
          "does not explain (garbage collection, host work, synchronization: analyze the trace of "
          "the run beside the requests)",
          pi.stalls, FormatDuration(static_cast<DurationNs>(pi.stall_ns))));
    }
  }
  AddServingCharts(results, s);
  for (const std::string& n : results.notes) s.notes.push_back(n);
  if (m.impossible > 0) {
    s.notes.push_back(fmt::format(
        "{} request(s) end before their first token (E2E latency below TTFT): impossible, so "
        "left out of every figure; the file is damaged or its clocks disagree",
        m.impossible));
  }
  for (const std::string& n : results.not_derived) s.notes.push_back(n);
  if (m.failed > 0) {
    s.notes.push_back(
        fmt::format("{} request(s) failed; they count in no latency figure and meet "
                    "no SLO",
                    m.failed));
  }
}

}  // namespace sightline
