// Rule graph_launch_gaps: the GPU idles between consecutive CUDA graph replays because the host
// launches the next replay late: the step is one cudaGraphLaunch, so whatever the host does
// between launches (scheduling, sampling, reading results back, updating inputs) is GPU idle
// unless it overlaps the replay before. Counted per launching thread and device, between
// consecutive replays in launch order: the GPU idle from the end of one replay's work to the
// start of the next, and of it the part before the next launch call began (what the host
// delayed; the rest is launch latency). Pairs whose gap is far above the usual one (a phase of
// the program, not the loop) are left out. docs/analyses/findings.md, "graph_launch_gaps".
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyses/findings/findings.h"
#include "base/stats.h"
#include "facts/graph_replays.h"

namespace sightline {
namespace {

constexpr int64_t kMinPairs = 3;             // fewer consecutive replays: no loop to speak of
constexpr double kMinSavingFraction = 0.05;  // of the replay loop's span
constexpr double kMaxGapOverMedian = 10.0;   // a longer gap is another phase, not the loop
constexpr size_t kShownCalls = 4;            // host calls named in the finding

struct HostTime {
  int64_t count = 0;
  DurationNs in_gaps_ns = 0;  // clipped to the gaps
};

// The host work of one thread inside [a, b): API calls (outermost only: a runtime call's driver
// call is inside it), OS runtime calls and NVTX ranges (not the iterations, not those reaching
// past both ends of the gap), each clipped to it. Rows of each table are in start order; `next`
// keeps the scan position (gaps come in time order and do not overlap), so the scans cost one pass
// over each table in all.
class GapHostWork {
 public:
  // `skip`: range rows not to list (the iterations: a gap between steps lies across two).
  GapHostWork(const Trace& trace, int32_t pid, int32_t tid, const std::vector<int32_t>& skip)
      : trace_(trace) {
    std::vector<uint8_t> skipped(trace.ranges.size(), 0);
    for (int32_t row : skip) {
      if (row >= 0 && static_cast<size_t>(row) < skipped.size()) skipped[row] = 1;
    }
    for (size_t r = 0; r < trace.api_calls.size(); ++r) {
      if (trace.api_calls.pid[r] == pid && trace.api_calls.tid[r] == tid) api_.push_back(r);
    }
    for (size_t r = 0; r < trace.os_calls.size(); ++r) {
      if (trace.os_calls.pid[r] == pid && trace.os_calls.tid[r] == tid) os_.push_back(r);
    }
    for (size_t r = 0; r < trace.ranges.size(); ++r) {
      if (trace.ranges.pid[r] == pid && trace.ranges.tid[r] == tid && !skipped[r] &&
          (trace.ranges.kind[r] == RangeKind::kNvtxPushPop ||
           trace.ranges.kind[r] == RangeKind::kNvtxStartEnd ||
           trace.ranges.kind[r] == RangeKind::kUserAnnotation)) {
        ranges_.push_back(r);
      }
    }
  }

  void Add(TimeNs a, TimeNs b) {
    const ApiCallTable& api = trace_.api_calls;
    TimeNs covered = INT64_MIN;  // end of the last outermost call counted
    Scan(api_, api_next_, a, b, api.start_ns, api.end_ns, [&](size_t r) {
      if (api.end_ns[r] <= covered) return;  // inside a call already counted
      covered = api.end_ns[r];
      Count(calls, std::string(trace_.str(api.name[r])), api.start_ns[r], api.end_ns[r], a, b);
    });
    const OsCallTable& os = trace_.os_calls;
    Scan(os_, os_next_, a, b, os.start_ns, os.end_ns, [&](size_t r) {
      Count(calls, std::string(trace_.str(os.name[r])), os.start_ns[r], os.end_ns[r], a, b);
    });
    const RangeTable& rg = trace_.ranges;
    Scan(ranges_, range_next_, a, b, rg.start_ns, rg.end_ns, [&](size_t r) {
      if (rg.start_ns[r] < a && rg.end_ns[r] > b) return;  // a step around the gap
      Count(ranges, std::string(trace_.str(rg.name[r])), rg.start_ns[r], rg.end_ns[r], a, b);
    });
  }

  std::map<std::string, HostTime> calls, ranges;  // by name

 private:
  static void Count(std::map<std::string, HostTime>& into, std::string name, TimeNs s, TimeNs e,
                    TimeNs a, TimeNs b) {
    const DurationNs clipped = std::min(e, b) - std::max(s, a);
    if (clipped <= 0) return;
    HostTime& h = into[std::move(name)];
    ++h.count;
    h.in_gaps_ns += clipped;
  }
  // The rows of `rows` overlapping [a, b), in start order: those starting inside, and of the few
  // before, those reaching into it (a call or range that began before the gap).
  template <typename F>
  static void Scan(const std::vector<size_t>& rows, size_t& next, TimeNs a, TimeNs b,
                   const std::vector<TimeNs>& start, const std::vector<TimeNs>& end, F&& f) {
    while (next < rows.size() && start[rows[next]] < a) ++next;
    for (size_t i = next >= 4 ? next - 4 : 0; i < rows.size() && start[rows[i]] < b; ++i) {
      if (end[rows[i]] > a) f(rows[i]);
    }
  }

  const Trace& trace_;
  std::vector<size_t> api_, os_, ranges_;
  size_t api_next_ = 0, os_next_ = 0, range_next_ = 0;
};

std::string TopList(const std::map<std::string, HostTime>& by_name, DurationNs total) {
  std::vector<std::pair<std::string, HostTime>> v(by_name.begin(), by_name.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) {
    return x.second.in_gaps_ns > y.second.in_gaps_ns;
  });
  std::string out;
  for (size_t i = 0; i < std::min(v.size(), kShownCalls); ++i) {
    if (!out.empty()) out += ", ";
    out += fmt::format(
        "{} x{} ({}, {})", v[i].first, v[i].second.count, FormatDuration(v[i].second.in_gaps_ns),
        Percent(static_cast<double>(v[i].second.in_gaps_ns), static_cast<double>(total)));
  }
  return out;
}

}  // namespace

Status RuleGraphLaunchGaps(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  const GraphReplays& gr = c.graphs().Replays();
  if (gr.replays.size() < static_cast<size_t>(kMinPairs) + 1) return Status::Ok();

  // Consecutive replays per (launching thread, device), in launch order.
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<const GraphReplay*>> loops;
  for (const GraphReplay& g : gr.replays) {
    if (g.launch_ns < 0) continue;
    loops[{g.pid, g.tid, g.device}].push_back(&g);
  }
  // The loop with the most replays is the one reported (a serving loop has one launching thread).
  const std::vector<const GraphReplay*>* loop = nullptr;
  std::tuple<int32_t, int32_t, int32_t> where{};
  for (const auto& [key, replays] : loops) {
    if (loop == nullptr || replays.size() > loop->size()) {
      loop = &replays;
      where = key;
    }
  }
  if (loop == nullptr || loop->size() < static_cast<size_t>(kMinPairs) + 1) return Status::Ok();
  const auto [pid, tid, device] = where;
  const std::vector<Interval>& busy = c.gpu().Busy(device);

  struct Gap {
    const GraphReplay* before;
    const GraphReplay* after;
    DurationNs idle_ns = 0;  // GPU idle between the two replays' work
    DurationNs host_ns = 0;  // of it, before the next launch call began
    TimeNs host_end_ns = 0;  // min(next launch, next GPU start)
  };
  std::vector<Gap> gaps;
  for (size_t i = 1; i < loop->size(); ++i) {
    const GraphReplay* a = (*loop)[i - 1];
    const GraphReplay* b = (*loop)[i];
    Gap g{a, b};
    if (b->gpu_start_ns > a->gpu_end_ns) {
      g.idle_ns = TotalLength(GapsWithin(busy, a->gpu_end_ns, b->gpu_start_ns));
      g.host_end_ns = std::min(b->launch_ns, b->gpu_start_ns);
      if (g.host_end_ns > a->gpu_end_ns) {
        g.host_ns = TotalLength(GapsWithin(busy, a->gpu_end_ns, g.host_end_ns));
      }
    }
    gaps.push_back(g);
  }
  std::vector<int64_t> idle;
  for (const Gap& g : gaps) idle.push_back(g.idle_ns);
  const double median = Median(idle);
  // Gaps far above the usual one (and above a stall's length) are another phase of the program.
  const double limit = std::max(kMaxGapOverMedian * median, static_cast<double>(kMaxLaunchGapNs));
  DurationNs idle_total = 0, host_total = 0;
  int64_t pairs = 0, late = 0, left_out = 0;
  const Gap* largest = nullptr;
  std::vector<int32_t> iteration_rows;
  if (const IterationSet* set = c.loop().MainSet()) {
    for (const Iteration& it : set->iterations) iteration_rows.push_back(it.range_row);
  }
  GapHostWork host(trace, pid, tid, iteration_rows);
  Finding f;
  for (const Gap& g : gaps) {
    if (static_cast<double>(g.idle_ns) > limit) {
      ++left_out;
      continue;
    }
    ++pairs;
    idle_total += g.idle_ns;
    if (g.host_ns <= 0) continue;
    ++late;
    host_total += g.host_ns;
    host.Add(g.before->gpu_end_ns, g.host_end_ns);
    f.AddSpan(g.before->gpu_end_ns, g.host_end_ns, device);
    if (largest == nullptr || g.host_ns > largest->host_ns) largest = &g;
  }
  const TimeNs span_begin = loop->front()->gpu_start_ns;
  TimeNs span_end = span_begin;
  for (const GraphReplay* g : *loop) span_end = std::max(span_end, g->gpu_end_ns);
  const DurationNs span = span_end - span_begin;
  if (pairs < kMinPairs || late < kMinPairs || largest == nullptr ||
      static_cast<double>(host_total) < kMinSavingFraction * static_cast<double>(span)) {
    return Status::Ok();
  }
  std::vector<int64_t> late_gaps;
  for (const Gap& g : gaps) {
    if (g.host_ns > 0 && static_cast<double>(g.idle_ns) <= limit) late_gaps.push_back(g.host_ns);
  }
  const auto median_late = static_cast<DurationNs>(Median(late_gaps));

  f.id = "graph_launch_gaps";
  f.severity = static_cast<double>(host_total) >= 0.2 * static_cast<double>(span)
                   ? Severity::kHigh
                   : Severity::kMedium;
  f.title = fmt::format(
      "GPU idle between CUDA graph replays: the host launched {} of {} replays after the GPU had "
      "finished the previous one ({} idle, {} of the replay loop; median gap {})",
      late, pairs, FormatDuration(host_total),
      Percent(static_cast<double>(host_total), static_cast<double>(span)),
      FormatDuration(median_late));
  f.evidence.push_back({"replays", "Consecutive replays compared", pairs + 1, Unit::kCount});
  f.evidence.push_back({"late_launches", "Launched after the GPU went idle", late, Unit::kCount});
  f.evidence.push_back(
      {"idle_between_replays_ns", "GPU idle between replays", idle_total, Unit::kDurationNs});
  f.evidence.push_back({"idle_before_launch_ns", "Of it, before the next launch call", host_total,
                        Unit::kDurationNs});
  f.evidence.push_back(
      {"median_gap_ns", "Median idle before a late launch", median_late, Unit::kDurationNs});
  f.evidence.push_back({"loop_span_ns", "Replay loop span (first to last replay on the GPU)", span,
                        Unit::kDurationNs});
  f.evidence.push_back({"variants", "Distinct graphs replayed",
                        static_cast<int64_t>(gr.variants.size()), Unit::kCount});
  if (left_out > 0) {
    f.evidence.push_back({"gaps_left_out", "Gaps left out (over 10x the median: another phase)",
                          left_out, Unit::kCount});
  }
  const std::string calls = TopList(host.calls, host_total);
  const std::string ranges = TopList(host.ranges, host_total);
  if (!calls.empty()) {
    f.evidence.push_back({"host_calls", "Host calls in the gaps (time inside them)", calls});
  }
  if (!ranges.empty()) {
    f.evidence.push_back({"host_ranges", "Ranges in the gaps (time inside them)", ranges});
  }
  f.where = fmt::format(
      "device {}, graphs launched by thread {}:{}; largest gap {} idle after the replay ending at "
      "{}, before the launch at {}",
      device, pid, tid, FormatDuration(largest->host_ns),
      FormatDuration(largest->before->gpu_end_ns - trace.begin_ns()),
      FormatDuration(largest->after->launch_ns - trace.begin_ns()));
  bool sync = false;
  for (const auto& [name, h] : host.calls) {
    sync = sync || name.find("Synchronize") != std::string::npos ||
           (name.find("Memcpy") != std::string::npos && name.find("Async") == std::string::npos);
  }
  f.recommendation = fmt::format(
      "Launch the next replay before the host work of the step, or overlap that work with the "
      "replay in flight: prepare the next step's inputs while the current graph runs and update "
      "the graph's static input buffers with async copies from pinned memory, read the sampled "
      "tokens back after launching the next replay, not before (TensorRT-LLM's overlap "
      "scheduler, vLLM's async scheduling, SGLang's overlap schedule do this){}. The calls and "
      "ranges above are what the launching thread did in the gaps.",
      sync ? "; the launching thread blocks in the gaps (a synchronize or a blocking copy): "
             "replace it with an event the next step waits on"
           : "");
  f.estimated_savings_ns = host_total;
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
