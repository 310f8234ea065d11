// The "idle_gaps" report section: ComputeIdleGaps's result as facts, per-device tables, the gap
// histogram (table and series) and the largest gaps. Definitions: docs/metrics.md, "Idle gaps".
#include <fmt/format.h>

#include <algorithm>

#include "analyses/common/analysis_context.h"
#include "analyses/common/percent.h"
#include "analyses/idle_gaps/idle_gaps.h"

namespace sightline {
namespace {

std::string WorkName(const Trace& trace, int64_t work) {
  if (work < 0) return "";
  const size_t nk = trace.kernels.size();
  if (static_cast<size_t>(work) < nk) return std::string(trace.str(trace.kernels.short_name[work]));
  const MemOpKind kind = trace.memops.kind[work - nk];
  if (kind == MemOpKind::kMemset) return "[memset]";
  return fmt::format("[memcpy {}]", MemOpKindName(kind));
}

}  // namespace

Status RunIdleGapsSection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  const AnalyzeOptions& options = context.options();
  ASSIGN_OR_RETURN(const IdleGapsResult* result, CachedIdleGaps(context));
  const IdleGapsResult& r = *result;
  const size_t shown = std::min(r.gaps.size(), static_cast<size_t>(std::max(options.top_n, 0)));

  Section& s = report.AddSection("idle_gaps", "GPU idle gaps", input);
  s.AddFact("min_gap_ns", "Gaps counted from", r.min_gap_ns, Unit::kDurationNs);
  if (r.devices.empty()) {
    s.notes.push_back("no GPU work in this trace: nothing to measure");
    return Status::Ok();
  }
  DurationNs span = 0, idle = 0, largest = 0, after_sync = 0;
  int64_t gaps = 0;
  std::array<DurationNs, kNumIdleCauses> cause_ns{};
  for (const DeviceIdle& d : r.devices) {
    span += d.span_ns();
    idle += d.idle_ns;
    gaps += d.gaps;
    largest = std::max(largest, d.largest_gap_ns);
    after_sync += d.idle_after_sync_ns;
    for (int c = 0; c < kNumIdleCauses; ++c) cause_ns[c] += d.cause_ns[c];
  }
  s.AddFact("devices", "Devices with GPU work", static_cast<int64_t>(r.devices.size()),
            Unit::kCount);
  s.AddFact("idle_ns", "Idle time (gaps >= minimum)", idle, Unit::kDurationNs);
  s.AddFact("idle_pct", "Idle share of active span", Pct(idle, span), Unit::kPercent);
  s.AddFact("gaps", "Gaps", gaps, Unit::kCount);
  s.AddFact("largest_gap_ns", "Largest gap", largest, Unit::kDurationNs);
  s.AddFact("idle_after_sync_pct", "Idle in gaps right after a synchronize", Pct(after_sync, idle),
            Unit::kPercent);
  if (idle > 0) {
    const int top =
        static_cast<int>(std::max_element(cause_ns.begin(), cause_ns.end()) - cause_ns.begin());
    s.AddFact("main_cause", "Main cause", std::string(IdleCauseName(static_cast<IdleCause>(top))));
    s.AddFact("main_cause_pct", "Main cause share of idle", Pct(cause_ns[top], idle),
              Unit::kPercent);
  }

  Table& dev = s.AddTable("devices", "Per device",
                          {{"device", "device", Unit::kNumber},
                           {"span_ns", "active span", Unit::kDurationNs},
                           {"busy_ns", "busy", Unit::kDurationNs},
                           {"busy_pct", "busy %", Unit::kPercent},
                           {"idle_ns", "idle (gaps)", Unit::kDurationNs},
                           {"idle_pct", "idle %", Unit::kPercent},
                           {"gaps", "gaps", Unit::kCount},
                           {"largest_gap_ns", "largest gap", Unit::kDurationNs},
                           {"idle_after_sync_ns", "idle after sync", Unit::kDurationNs},
                           {"short_idle_ns", "idle in shorter gaps", Unit::kDurationNs},
                           {"short_gaps", "shorter gaps", Unit::kCount}});
  for (const DeviceIdle& d : r.devices) {
    dev.rows.push_back({int64_t{d.device}, d.span_ns(), d.busy_ns, Pct(d.busy_ns, d.span_ns()),
                        d.idle_ns, Pct(d.idle_ns, d.span_ns()), d.gaps, d.largest_gap_ns,
                        d.idle_after_sync_ns, d.short_idle_ns, d.short_gaps});
  }

  Table& causes = s.AddTable("causes", "Idle time by cause",
                             {{"device", "device", Unit::kNumber},
                              {"cause", "cause", Unit::kText},
                              {"gaps", "gaps", Unit::kCount},
                              {"idle_ns", "idle", Unit::kDurationNs},
                              {"idle_pct", "% of idle", Unit::kPercent},
                              {"description", "meaning", Unit::kText}});
  for (const DeviceIdle& d : r.devices) {
    std::array<int, kNumIdleCauses> order{};
    for (int c = 0; c < kNumIdleCauses; ++c) order[c] = c;
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return d.cause_ns[x] > d.cause_ns[y]; });
    for (int c : order) {
      if (d.cause_count[c] == 0) continue;
      const IdleCause cause = static_cast<IdleCause>(c);
      causes.rows.push_back({int64_t{d.device}, std::string(IdleCauseName(cause)), d.cause_count[c],
                             d.cause_ns[c], Pct(d.cause_ns[c], d.idle_ns),
                             std::string(IdleCauseDescription(cause))});
    }
  }

  std::vector<std::pair<std::string, double>> by_cause;  // all devices
  for (const DeviceIdle& d : r.devices) {
    for (int c = 0; c < kNumIdleCauses; ++c) {
      if (d.cause_count[c] == 0) continue;
      by_cause.emplace_back(IdleCauseName(static_cast<IdleCause>(c)),
                            static_cast<double>(d.cause_ns[c]));
    }
  }
  if (auto bars = SumsLargestFirst(by_cause); !bars.empty()) {
    s.AddBarChart("idle_by_cause", "Idle time by cause (all devices)", Unit::kDurationNs, bars);
  }

  Table& hist = s.AddTable("histogram", "Gap lengths",
                           {{"device", "device", Unit::kNumber},
                            {"bucket", "length", Unit::kText},
                            {"gaps", "gaps", Unit::kCount},
                            {"idle_ns", "idle", Unit::kDurationNs}});
  // Filled locally and appended at the end: a reference into s.series would dangle on growth.
  Series count_series;
  count_series.key = "gap_count_by_length";
  count_series.title = "Idle gaps by length (all devices; x = bucket lower bound)";
  count_series.x_unit = Unit::kDurationNs;
  count_series.y_unit = Unit::kCount;
  Series time_series;
  time_series.key = "gap_time_by_length";
  time_series.title = "Idle time by gap length (all devices; x = bucket lower bound)";
  time_series.x_unit = Unit::kDurationNs;
  time_series.y_unit = Unit::kDurationNs;
  const DurationNs kLower[kNumGapBuckets] = {std::min(r.min_gap_ns, 10 * kNsPerUs), 10 * kNsPerUs,
                                             100 * kNsPerUs, kNsPerMs, 10 * kNsPerMs};
  for (int b = 0; b < kNumGapBuckets; ++b) {
    int64_t count = 0;
    DurationNs total = 0;
    for (const DeviceIdle& d : r.devices) {
      hist.rows.push_back(
          {int64_t{d.device}, std::string(GapBucketLabel(b)), d.bucket_count[b], d.bucket_ns[b]});
      count += d.bucket_count[b];
      total += d.bucket_ns[b];
    }
    count_series.x.push_back(static_cast<double>(kLower[b]));
    count_series.y.push_back(static_cast<double>(count));
    time_series.x.push_back(static_cast<double>(kLower[b]));
    time_series.y.push_back(static_cast<double>(total));
  }
  std::stable_sort(hist.rows.begin(), hist.rows.end(), [](const auto& x, const auto& y) {
    return std::get<int64_t>(x[0]) < std::get<int64_t>(y[0]);
  });
  hist.note = "the first bucket starts at the minimum gap length";
  s.series.push_back(std::move(count_series));
  s.series.push_back(std::move(time_series));

  Table& top = s.AddTable("largest_gaps", "Largest gaps",
                          {{"device", "device", Unit::kNumber},
                           {"start_ns", "start", Unit::kTimestampNs},
                           {"duration_ns", "duration", Unit::kDurationNs},
                           {"cause", "cause", Unit::kText},
                           {"launched_late", "late", Unit::kText},
                           {"after_sync", "after sync", Unit::kText},
                           {"main_api", "main CUDA call", Unit::kText},
                           {"prev_work", "work before", Unit::kText},
                           {"next_work", "work after", Unit::kText}});
  for (size_t i = 0; i < shown; ++i) {
    const IdleGap& g = r.gaps[i];
    const char* late = g.launched_late < 0 ? "unknown" : g.launched_late ? "yes" : "no";
    top.rows.push_back({int64_t{g.device}, g.start_ns - trace.begin_ns(), g.dur_ns(),
                        std::string(IdleCauseName(g.cause)), std::string(late),
                        std::string(g.after_sync ? "yes" : ""), std::string(trace.str(g.main_api)),
                        WorkName(trace, g.prev_work), WorkName(trace, g.next_work)});
  }
  top.total_rows = gaps;
  top.note =
      "start is relative to the trace begin; late = the work after the gap was launched after the "
      "gap began; main CUDA call = the call with the most time inside the gap; 'work before' "
      "ended at the gap's start, 'work after' began at its end";
  return Status::Ok();
}

}  // namespace sightline
