// Rule low_utilization: stretches of the timeline where a GPU is mostly idle (utilization per
// window of 1% of its active span below a threshold, merged into regions), with what the host did
// meanwhile. docs/analyses/findings.md, "low_utilization".
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "analyses/findings/findings.h"

namespace sightline {
namespace {

constexpr int kBins = 100;                       // windows per device active span
constexpr DurationNs kLowUtilMinBinNs = 10'000;  // shorter windows measure launch jitter
constexpr double kLowUtilization = 0.30;         // a window below this share busy is "low"
// Idle gaps up to this long belong to launch_bound (and the first this-long stretch after a
// blocking call to host_sync); only the rest of longer gaps counts here.
constexpr DurationNs kClaimedByOthersNs = 1'000'000;
constexpr double kLowUtilMinSaving = 0.05;  // of the device's active span
constexpr size_t kShownRegions = 3;

struct Region {
  int32_t device = 0;
  TimeNs start_ns = 0, end_ns = 0;
  DurationNs busy_ns = 0;
  DurationNs estimate_ns = 0;
};

// What the host did in [a, b): time per API class and per API name, the ranges it was in.
std::string HostActivity(const Trace& trace, TimeNs a, TimeNs b) {
  const auto& api = trace.api_calls;
  std::array<std::vector<Interval>, 7> by_class;
  std::vector<Interval> any;
  std::map<std::string_view, DurationNs> by_name;
  for (size_t r = 0; r < api.size() && api.start_ns[r] < b; ++r) {
    const TimeNs s = std::max(a, api.start_ns[r]), e = std::min(b, api.end_ns[r]);
    if (e <= s) continue;
    by_class[static_cast<size_t>(api.api_class[r])].push_back({s, e});
    any.push_back({s, e});
    by_name[trace.str(api.name[r])] += e - s;
  }
  const double len = static_cast<double>(b - a);
  std::string out;
  for (size_t c = 0; c < by_class.size(); ++c) {
    const DurationNs t = TotalLength(MergeIntervals(std::move(by_class[c])));
    if (t >= 0.05 * len) {
      out += fmt::format("{}{} in {} calls", out.empty() ? "" : ", ", Percent(t, len),
                         ApiClassName(static_cast<ApiClass>(c)));
    }
  }
  const DurationNs none = (b - a) - TotalLength(MergeIntervals(std::move(any)));
  out += fmt::format("{}{} in no CUDA call", out.empty() ? "" : ", ", Percent(none, len));
  auto top = std::max_element(by_name.begin(), by_name.end(),
                              [](const auto& x, const auto& y) { return x.second < y.second; });
  if (top != by_name.end() && top->second >= 0.05 * len) {
    out += fmt::format(" (top call {}: {})", top->first, FormatDuration(top->second));
  }
  // The innermost host ranges (NVTX, annotations, operators) covering most of the region.
  const auto& rg = trace.ranges;
  // Per name, the union of its ranges' overlap with the region: ranges of one name nested in
  // each other, or open on several threads at once, count once (a share stays <= 100%).
  std::map<std::string_view, std::vector<Interval>> ranges;
  for (size_t r = 0; r < rg.size() && rg.start_ns[r] < b; ++r) {
    if (rg.kind[r] == RangeKind::kPythonFunction) continue;
    const TimeNs s = std::max(a, rg.start_ns[r]), e = std::min(b, rg.end_ns[r]);
    if (e - s >= 0.2 * len && rg.depth[r] > 0) ranges[trace.str(rg.name[r])].push_back({s, e});
  }
  std::vector<std::pair<std::string_view, DurationNs>> rv;
  for (auto& [name, intervals] : ranges) {
    rv.emplace_back(name, TotalLength(MergeIntervals(std::move(intervals))));
  }
  std::stable_sort(rv.begin(), rv.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string names;
  for (size_t i = 0; i < rv.size() && i < 3; ++i) {
    names += fmt::format("{}{} ({})", i ? ", " : "", rv[i].first, Percent(rv[i].second, len));
  }
  if (!names.empty()) out += "; in ranges " + names;
  return out;
}

}  // namespace

Status RuleLowUtilization(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  LoopFacts& loop = c.loop();
  for (int32_t device : c.gpu().GpuDevices()) {
    const std::vector<Interval>& busy = c.gpu().Busy(device);
    if (busy.size() < 2) continue;
    const TimeNs first = busy.front().start_ns, last = busy.back().end_ns;
    const DurationNs span = last - first;
    const DurationNs bin = std::max<DurationNs>(kLowUtilMinBinNs, (span + kBins - 1) / kBins);
    if (span < 2 * bin) continue;

    // Low windows merged into regions.
    std::vector<Region> regions;
    for (TimeNs a = first; a < last; a += bin) {
      const TimeNs b = std::min(last, a + bin);
      const DurationNs on = BusyWithin(busy, a, b);
      if (on >= kLowUtilization * (b - a)) continue;
      if (!regions.empty() && regions.back().end_ns == a) {
        regions.back().end_ns = b;
        regions.back().busy_ns += on;
      } else {
        regions.push_back({device, a, b, on, 0});
      }
    }
    if (regions.empty()) continue;
    // The estimate: idle time of each region beyond the first kClaimedByOthersNs of its gap,
    // outside the stretches other rules or no fix own: with an iteration loop on this device, the
    // time before its first and after its last iteration (start-up, loading, warm-up and teardown
    // happen once; they are shown, not counted) and the outlier iterations (outlier_iterations).
    std::vector<Interval> not_counted;
    DurationNs outside_loop_idle = 0;
    const IterationSet* set = loop.MainSet();
    const bool has_loop =
        set != nullptr && !set->iterations.empty() &&
        (set->devices.empty() ||
         std::find(set->devices.begin(), set->devices.end(), device) != set->devices.end());
    const TimeNs loop_start = has_loop ? set->iterations.front().start_ns : first;
    const TimeNs loop_end = has_loop ? set->iterations.back().end_ns : last;
    if (has_loop) {
      not_counted.push_back({std::min(first, loop_start), loop_start});
      for (const Iteration& it : set->iterations) {
        if (it.outlier || it.warmup) not_counted.push_back({it.start_ns, it.end_ns});
      }
      not_counted.push_back({loop_end, std::max(last, loop_end)});
      not_counted = MergeIntervals(std::move(not_counted));
    }
    DurationNs total = 0, region_time = 0, region_idle = 0;
    for (Region& r : regions) {
      region_time += r.end_ns - r.start_ns;
      region_idle += (r.end_ns - r.start_ns) - r.busy_ns;
    }
    {
      const std::vector<Interval> gaps = GapsWithin(busy, first, last);
      size_t ri = 0;
      for (const Interval& g : gaps) {
        if (g.dur_ns() <= kClaimedByOthersNs) continue;
        const TimeNs s0 = g.start_ns + kClaimedByOthersNs;
        while (ri < regions.size() && regions[ri].end_ns <= s0) ++ri;
        for (size_t j = ri; j < regions.size() && regions[j].start_ns < g.end_ns; ++j) {
          const TimeNs s = std::max(s0, regions[j].start_ns),
                       e = std::min(g.end_ns, regions[j].end_ns);
          if (e <= s) continue;
          const DurationNs excluded = BusyWithin(not_counted, s, e);
          regions[j].estimate_ns += (e - s) - excluded;
          if (has_loop) {
            outside_loop_idle += std::max<DurationNs>(0, std::min(e, loop_start) - s) +
                                 std::max<DurationNs>(0, e - std::max(s, loop_end));
          }
        }
      }
    }
    for (const Region& r : regions) total += r.estimate_ns;
    if (total < kLowUtilMinSaving * span) continue;

    std::vector<size_t> order;
    for (size_t i = 0; i < regions.size(); ++i) {
      if (regions[i].estimate_ns > 0) order.push_back(i);
    }
    const size_t top = std::min(kShownRegions, order.size());
    std::partial_sort(order.begin(), order.begin() + top, order.end(), [&](size_t a, size_t b) {
      return regions[a].estimate_ns > regions[b].estimate_ns;
    });

    Finding f;
    f.id = "low_utilization";
    f.severity = total >= 0.2 * span ? Severity::kHigh : Severity::kMedium;
    f.title = fmt::format(
        "Low GPU utilization on device {}: {} region{}, {} of its active span, under {:.0f}% busy",
        device, order.size(), order.size() == 1 ? "" : "s", Percent(region_time, span),
        100 * kLowUtilization);
    f.evidence.push_back({"regions", "Low-utilization regions with long gaps",
                          static_cast<int64_t>(order.size()), Unit::kCount});
    f.evidence.push_back(
        {"region_ns", "Time in low-utilization windows", region_time, Unit::kDurationNs});
    f.evidence.push_back({"region_idle_ns", "GPU idle in them", region_idle, Unit::kDurationNs});
    f.evidence.push_back({"window_ns", "Window (1% of the active span)", bin, Unit::kDurationNs});
    f.evidence.push_back({"active_span_ns", "Device active span", span, Unit::kDurationNs});
    f.evidence.push_back(
        {"unclaimed_idle_ns", "Idle beyond 1 ms into each gap, counted", total, Unit::kDurationNs});
    if (has_loop) {
      f.evidence.push_back({"outside_loop_idle_ns",
                            "Idle before/after the iteration loop (not counted)", outside_loop_idle,
                            Unit::kDurationNs});
    }
    std::string where;
    for (size_t i = 0; i < top; ++i) {
      const Region& r = regions[order[i]];
      f.AddSpan(r.start_ns, r.end_ns, device);
      const int64_t w =
          loop.FindWindow(loop.MainSet() != nullptr ? loop.MainSet()->pid : -1, r.start_ns);
      where += fmt::format(
          "{}[{}..{}]{} {} busy, host: {}", i ? "; " : "",
          FormatDuration(r.start_ns - trace.begin_ns()),
          FormatDuration(r.end_ns - trace.begin_ns()),
          w >= 0 && loop.Windows()[w].it != nullptr ? " in " + loop.WindowLabel(loop.Windows()[w])
                                                    : std::string(),
          Percent(r.busy_ns, r.end_ns - r.start_ns), HostActivity(trace, r.start_ns, r.end_ns));
    }
    f.where = fmt::format("device {}, largest regions: {}", device, where);
    f.recommendation =
        "Keep the GPU fed through these stretches: overlap host work (data loading, "
        "tokenization, scheduling, sampling) with GPU work in a separate thread or process, move "
        "one-time work (loading, compilation, allocation, warm-up) out of the measured loop, and "
        "replace synchronize calls that wait for results with asynchronous copies and events.";
    f.estimated_savings_ns = total;
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
