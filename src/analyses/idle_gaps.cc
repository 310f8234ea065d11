#include "analyses/idle_gaps.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>

#include "analyses/interval_stream.h"

namespace sightline {
namespace {

// The processes that put work on each device (from the work's pid; -1 pids are ignored), by
// device id.
std::vector<std::pair<int32_t, std::vector<int32_t>>> LaunchingProcesses(const Trace& trace) {
  std::vector<std::pair<int32_t, std::vector<int32_t>>> out;
  int32_t last_device = INT32_MIN, last_pid = INT32_MIN;
  auto note = [&](int32_t device, int32_t pid) {
    if (device == last_device && pid == last_pid) return;
    last_device = device;
    last_pid = pid;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == device; });
    if (it == out.end()) it = out.insert(out.end(), {device, {}});
    std::vector<int32_t>& pids = it->second;
    if (pid >= 0 && std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
  };
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    note(trace.kernels.device[i], trace.kernels.pid[i]);
  }
  for (size_t i = 0; i < trace.memops.size(); ++i) {
    note(trace.memops.device[i], trace.memops.pid[i]);
  }
  for (auto& [device, pids] : out) std::sort(pids.begin(), pids.end());
  std::sort(out.begin(), out.end());
  return out;
}

// Coverage of increasing gaps by the union of one device's processes' API calls of some classes.
auto ApiCoverage(const Trace& trace, const std::vector<int32_t>& pids, uint32_t class_mask) {
  const ApiCallTable* a = &trace.api_calls;
  const std::vector<int32_t>* p = &pids;
  return StreamingCoverage(ApiCallSource(trace, [a, p, class_mask](size_t i) {
    if (!((class_mask >> static_cast<int>(a->api_class[i])) & 1u)) return false;
    return p->empty() || std::binary_search(p->begin(), p->end(), a->pid[i]);
  }));
}

constexpr uint32_t Bit(ApiClass c) { return 1u << static_cast<int>(c); }

// Walks one device's kernels and memory operations in start order to name the work on either side
// of each gap. Queries must come in increasing time order.
class NeighbourFinder {
 public:
  NeighbourFinder(const Trace& trace, int32_t device) : trace_(trace), device_(device) {}

  // Passes all of the device's work that starts before t. Afterwards prev() is the work with the
  // latest end among it (for a gap [a, t), the work that ended at a).
  void AdvanceTo(TimeNs t) {
    const KernelTable& k = trace_.kernels;
    for (; ki_ < k.size() && k.start_ns[ki_] < t; ++ki_) {
      if (k.device[ki_] == device_ && k.end_ns[ki_] > max_end_) {
        max_end_ = k.end_ns[ki_];
        prev_ = static_cast<int64_t>(ki_);
      }
    }
    const MemOpTable& m = trace_.memops;
    for (; mi_ < m.size() && m.start_ns[mi_] < t; ++mi_) {
      if (m.device[mi_] == device_ && m.end_ns[mi_] > max_end_) {
        max_end_ = m.end_ns[mi_];
        prev_ = static_cast<int64_t>(k.size() + mi_);
      }
    }
  }
  int64_t prev() const { return prev_; }

  // Among the device's work starting exactly at t (after AdvanceTo(t)), the one whose launching
  // call ended first; sets *launch_end_ns (INT64_MAX when none of them is linked).
  int64_t StartingAt(TimeNs t, TimeNs* launch_end_ns) const {
    const KernelTable& k = trace_.kernels;
    const MemOpTable& m = trace_.memops;
    const ApiCallTable& a = trace_.api_calls;
    int64_t best = -1;
    *launch_end_ns = INT64_MAX;
    auto consider = [&](int64_t work, int32_t call) {
      const TimeNs end = call == kNoRow ? INT64_MAX : a.end_ns[call];
      if (best < 0 || end < *launch_end_ns) {
        best = work;
        *launch_end_ns = end;
      }
    };
    for (size_t i = ki_; i < k.size() && k.start_ns[i] == t; ++i) {
      if (k.device[i] == device_) consider(static_cast<int64_t>(i), k.launch_call[i]);
    }
    for (size_t i = mi_; i < m.size() && m.start_ns[i] == t; ++i) {
      if (m.device[i] == device_) consider(static_cast<int64_t>(k.size() + i), m.launch_call[i]);
    }
    return best;
  }

 private:
  const Trace& trace_;
  int32_t device_;
  size_t ki_ = 0, mi_ = 0;
  TimeNs max_end_ = INT64_MIN;
  int64_t prev_ = -1;
};

// The cause with the largest coverage; ties go to the earlier one in this order.
IdleCause DominantCause(const IdleGap& g) {
  const std::pair<DurationNs, IdleCause> options[] = {
      {g.sync_ns, IdleCause::kSynchronize}, {g.memcpy_ns, IdleCause::kMemcpy},
      {g.launch_ns, IdleCause::kLaunch},    {g.other_api_ns, IdleCause::kOtherApi},
      {g.host_ns, IdleCause::kHost},
  };
  auto best = options[0];
  for (const auto& o : options) {
    if (o.first > best.first) best = o;
  }
  return best.second;
}

struct LongerGap {
  bool operator()(const IdleGap& x, const IdleGap& y) const {
    if (x.dur_ns() != y.dur_ns()) return x.dur_ns() > y.dur_ns();
    if (x.device != y.device) return x.device < y.device;
    return x.start_ns < y.start_ns;
  }
};

std::string WorkName(const Trace& trace, int64_t work) {
  if (work < 0) return "";
  const size_t nk = trace.kernels.size();
  if (static_cast<size_t>(work) < nk) return std::string(trace.str(trace.kernels.short_name[work]));
  const MemOpKind kind = trace.memops.kind[work - nk];
  if (kind == MemOpKind::kMemset) return "[memset]";
  return fmt::format("[memcpy {}]", MemOpKindName(kind));
}

double Pct(DurationNs part, DurationNs whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

const char* IdleCauseName(IdleCause cause) {
  switch (cause) {
    case IdleCause::kQueued:
      return "queued";
    case IdleCause::kSynchronize:
      return "synchronize";
    case IdleCause::kMemcpy:
      return "memcpy";
    case IdleCause::kLaunch:
      return "launch";
    case IdleCause::kOtherApi:
      return "other_api";
    case IdleCause::kHost:
      return "host";
  }
  return "host";
}

const char* IdleCauseDescription(IdleCause cause) {
  switch (cause) {
    case IdleCause::kQueued:
      return "next work already launched: GPU-side wait (stream/event dependency, graph, callback)";
    case IdleCause::kSynchronize:
      return "host blocked in a synchronize call";
    case IdleCause::kMemcpy:
      return "host in a memcpy/memset call (e.g. synchronous copy)";
    case IdleCause::kLaunch:
      return "host inside launch calls: launch-bound, launching late";
    case IdleCause::kOtherApi:
      return "host in other CUDA calls (malloc/free, events, ...)";
    case IdleCause::kHost:
      return "host code / nothing recorded (e.g. Python, scheduling)";
  }
  return "";
}

const char* GapBucketLabel(int bucket) {
  static const char* const kLabels[kNumGapBuckets] = {"<10 us", "10-100 us", "100 us-1 ms",
                                                      "1-10 ms", ">=10 ms"};
  return bucket >= 0 && bucket < kNumGapBuckets ? kLabels[bucket] : "";
}

int GapBucketOf(DurationNs gap_ns) {
  if (gap_ns < 10 * kNsPerUs) return 0;
  if (gap_ns < 100 * kNsPerUs) return 1;
  if (gap_ns < kNsPerMs) return 2;
  if (gap_ns < 10 * kNsPerMs) return 3;
  return 4;
}

StatusOr<IdleGapsResult> ComputeIdleGaps(const Trace& trace, const IdleGapsOptions& options) {
  if (options.min_gap_ns < 0) return InvalidArgumentError("min_gap_ns must not be negative");
  IdleGapsResult result;
  result.min_gap_ns = options.min_gap_ns;
  // Keeps the keep_largest longest gaps: the shortest kept one is on top.
  std::priority_queue<IdleGap, std::vector<IdleGap>, LongerGap> kept;

  for (const auto& [device, pids] : LaunchingProcesses(trace)) {
    // The device's busy stretches (intervals.h's "GPU busy", streamed rather than materialized).
    const int32_t dev = device;
    StreamingUnion busy(GpuWorkSource(trace, [dev](int32_t d) { return d == dev; }));
    Interval cur, next;
    if (!busy.Next(&cur)) continue;
    DeviceIdle& d = result.devices.emplace_back();
    d.device = device;
    d.first_start_ns = cur.start_ns;
    d.busy_ns = cur.dur_ns();

    auto sync = ApiCoverage(trace, pids, Bit(ApiClass::kSync));
    auto memcpy = ApiCoverage(trace, pids, Bit(ApiClass::kMemcpy) | Bit(ApiClass::kMemset));
    auto launch = ApiCoverage(trace, pids, Bit(ApiClass::kLaunch));
    auto other = ApiCoverage(trace, pids,
                             Bit(ApiClass::kAlloc) | Bit(ApiClass::kGraph) | Bit(ApiClass::kOther));
    auto any = ApiCoverage(trace, pids, ~0u);
    NeighbourFinder neighbours(trace, device);

    for (; busy.Next(&next); cur = next) {
      d.busy_ns += next.dur_ns();
      IdleGap g;
      g.device = device;
      g.start_ns = cur.end_ns;
      g.end_ns = next.start_ns;
      const DurationNs len = g.dur_ns();
      if (len < options.min_gap_ns) {
        ++d.short_gaps;
        d.short_idle_ns += len;
        continue;
      }
      ++d.gaps;
      d.idle_ns += len;
      d.largest_gap_ns = std::max(d.largest_gap_ns, len);
      const int bucket = GapBucketOf(len);
      ++d.bucket_count[bucket];
      d.bucket_ns[bucket] += len;

      neighbours.AdvanceTo(g.end_ns);
      g.prev_work = neighbours.prev();
      TimeNs launch_end;
      g.next_work = neighbours.StartingAt(g.end_ns, &launch_end);
      if (launch_end != INT64_MAX) g.launched_late = launch_end > g.start_ns ? 1 : 0;

      g.sync_ns = sync.Covered(g.start_ns, g.end_ns);
      g.memcpy_ns = memcpy.Covered(g.start_ns, g.end_ns);
      g.launch_ns = launch.Covered(g.start_ns, g.end_ns);
      g.other_api_ns = other.Covered(g.start_ns, g.end_ns);
      g.host_ns = len - any.Covered(g.start_ns, g.end_ns);
      g.cause = g.launched_late == 0 ? IdleCause::kQueued : DominantCause(g);
      ++d.cause_count[static_cast<int>(g.cause)];
      d.cause_ns[static_cast<int>(g.cause)] += len;

      if (options.keep_largest == 0) continue;
      if (kept.size() < options.keep_largest) {
        kept.push(g);
      } else if (LongerGap()(g, kept.top())) {
        kept.pop();
        kept.push(g);
      }
    }
    d.last_end_ns = cur.end_ns;
  }
  result.gaps.reserve(kept.size());
  while (!kept.empty()) {
    result.gaps.push_back(kept.top());
    kept.pop();
  }
  std::reverse(result.gaps.begin(), result.gaps.end());
  return result;
}

Status RunIdleGapsSection(const Trace& trace, int input, const AnalyzeOptions& options,
                          Report& report) {
  IdleGapsOptions o;
  o.min_gap_ns = options.min_gap_ns;
  o.keep_largest = static_cast<size_t>(std::max(options.top_n, 0));
  ASSIGN_OR_RETURN(IdleGapsResult r, ComputeIdleGaps(trace, o));

  Section& s = report.AddSection("idle_gaps", "GPU idle gaps", input);
  s.AddFact("min_gap_ns", "Gaps counted from", r.min_gap_ns, Unit::kDurationNs);
  if (r.devices.empty()) {
    s.notes.push_back("no GPU work in this trace: nothing to measure");
    return Status::Ok();
  }
  DurationNs span = 0, idle = 0, largest = 0;
  int64_t gaps = 0;
  std::array<DurationNs, kNumIdleCauses> cause_ns{};
  for (const DeviceIdle& d : r.devices) {
    span += d.span_ns();
    idle += d.idle_ns;
    gaps += d.gaps;
    largest = std::max(largest, d.largest_gap_ns);
    for (int c = 0; c < kNumIdleCauses; ++c) cause_ns[c] += d.cause_ns[c];
  }
  s.AddFact("devices", "Devices with GPU work", static_cast<int64_t>(r.devices.size()),
            Unit::kCount);
  s.AddFact("idle_ns", "Idle time (gaps >= minimum)", idle, Unit::kDurationNs);
  s.AddFact("idle_pct", "Idle share of active span", Pct(idle, span), Unit::kPercent);
  s.AddFact("gaps", "Gaps", gaps, Unit::kCount);
  s.AddFact("largest_gap_ns", "Largest gap", largest, Unit::kDurationNs);
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
                           {"short_idle_ns", "idle in shorter gaps", Unit::kDurationNs},
                           {"short_gaps", "shorter gaps", Unit::kCount}});
  for (const DeviceIdle& d : r.devices) {
    dev.rows.push_back({int64_t{d.device}, d.span_ns(), d.busy_ns, Pct(d.busy_ns, d.span_ns()),
                        d.idle_ns, Pct(d.idle_ns, d.span_ns()), d.gaps, d.largest_gap_ns,
                        d.short_idle_ns, d.short_gaps});
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

  Table& hist = s.AddTable("histogram", "Gap lengths",
                           {{"device", "device", Unit::kNumber},
                            {"bucket", "length", Unit::kText},
                            {"gaps", "gaps", Unit::kCount},
                            {"idle_ns", "idle", Unit::kDurationNs}});
  Series& count_series = s.series.emplace_back();
  count_series.key = "gap_count_by_length";
  count_series.title = "Idle gaps by length (all devices; x = bucket lower bound)";
  count_series.x_unit = Unit::kDurationNs;
  count_series.y_unit = Unit::kCount;
  Series& time_series = s.series.emplace_back();
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

  Table& top = s.AddTable("largest_gaps", "Largest gaps",
                          {{"device", "device", Unit::kNumber},
                           {"start_ns", "start", Unit::kTimestampNs},
                           {"duration_ns", "duration", Unit::kDurationNs},
                           {"cause", "cause", Unit::kText},
                           {"launched_late", "launched late", Unit::kText},
                           {"host_api_pct", "in CUDA calls %", Unit::kPercent},
                           {"prev_work", "work before", Unit::kText},
                           {"next_work", "work after", Unit::kText}});
  for (const IdleGap& g : r.gaps) {
    const char* late = g.launched_late < 0 ? "unknown" : g.launched_late ? "yes" : "no";
    top.rows.push_back({int64_t{g.device}, g.start_ns - trace.begin_ns(), g.dur_ns(),
                        std::string(IdleCauseName(g.cause)), std::string(late),
                        Pct(g.dur_ns() - g.host_ns, g.dur_ns()), WorkName(trace, g.prev_work),
                        WorkName(trace, g.next_work)});
  }
  top.total_rows = gaps;
  top.note =
      "start is relative to the trace begin; 'work before' ended at the gap's start, "
      "'work after' began at its end";
  return Status::Ok();
}

}  // namespace sightline
