#include "analyses/idle_gaps/idle_gaps.h"

#include <algorithm>
#include <queue>

#include "analyses/common/analysis_context.h"
#include "facts/interval_stream.h"

namespace sightline {
namespace {

// The processes that put work on each device (from the work's pid; -1 pids are ignored), by
// device id.
std::vector<std::pair<int32_t, std::vector<int32_t>>> LaunchingProcesses(AnalysisContext& context) {
  std::vector<std::pair<int32_t, std::vector<int32_t>>> out;
  for (const auto& [pid, device_id] : context.gpu().PidDevices()) {
    const int32_t device = device_id;  // a lambda may not capture a structured binding (clang 14)
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == device; });
    if (it == out.end()) it = out.insert(out.end(), {device, {}});
    if (pid >= 0) it->second.push_back(pid);  // PidDevices is sorted by pid: so are these
  }
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

// Sets main_api of each gap in one pass over the API calls: calls come in start order, so each
// device's cursor to its first gap that ends after the call's start only moves forward.
// O(calls x devices + overlaps).
void NameMainApiCalls(const Trace& trace,
                      const std::vector<std::pair<int32_t, std::vector<int32_t>>>& devices,
                      std::vector<IdleGap>& gaps) {
  if (gaps.empty()) return;
  struct DeviceGaps {
    const std::vector<int32_t>* pids;
    std::vector<IdleGap*> gaps;  // disjoint, by start
    size_t next = 0;             // first gap that ends after the current call's start
  };
  std::vector<DeviceGaps> by_device;
  for (const auto& [device, pids] : devices) {
    DeviceGaps dg{&pids, {}};
    for (IdleGap& g : gaps) {
      if (g.device == device) dg.gaps.push_back(&g);
    }
    if (dg.gaps.empty()) continue;
    std::sort(dg.gaps.begin(), dg.gaps.end(),
              [](const IdleGap* x, const IdleGap* y) { return x->start_ns < y->start_ns; });
    by_device.push_back(std::move(dg));
  }
  // Per gap, time inside it by API name (a handful of names each).
  std::vector<std::vector<std::pair<StringId, DurationNs>>> time_by_name(gaps.size());
  const ApiCallTable& a = trace.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    const TimeNs s = a.start_ns[i], e = a.end_ns[i];
    for (DeviceGaps& dg : by_device) {
      while (dg.next < dg.gaps.size() && dg.gaps[dg.next]->end_ns <= s) ++dg.next;
      if (dg.next == dg.gaps.size() || dg.gaps[dg.next]->start_ns >= e) continue;
      const std::vector<int32_t>& pids = *dg.pids;
      if (!pids.empty() && !std::binary_search(pids.begin(), pids.end(), a.pid[i])) continue;
      for (auto it = dg.gaps.begin() + dg.next; it != dg.gaps.end() && (*it)->start_ns < e; ++it) {
        const DurationNs overlap = std::min(e, (*it)->end_ns) - std::max(s, (*it)->start_ns);
        if (overlap <= 0) continue;
        auto& names = time_by_name[*it - gaps.data()];
        auto n = std::find_if(names.begin(), names.end(),
                              [&](const auto& p) { return p.first == a.name[i]; });
        if (n == names.end()) {
          names.push_back({a.name[i], overlap});
        } else {
          n->second += overlap;
        }
      }
    }
  }
  for (size_t g = 0; g < gaps.size(); ++g) {
    for (const auto& [name, ns] : time_by_name[g]) {
      if (ns > gaps[g].main_api_ns) {
        gaps[g].main_api = name;
        gaps[g].main_api_ns = ns;
      }
    }
  }
}

struct LongerGap {
  bool operator()(const IdleGap& x, const IdleGap& y) const {
    if (x.dur_ns() != y.dur_ns()) return x.dur_ns() > y.dur_ns();
    if (x.device != y.device) return x.device < y.device;
    return x.start_ns < y.start_ns;
  }
};

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

StatusOr<const IdleGapsResult*> CachedIdleGaps(AnalysisContext& context) {
  return context.results().Get<IdleGapsResult>("idle_gaps", [&context] {
    IdleGapsOptions o = context.options().idle_gaps;
    // Enough for every report's table of largest gaps, and for the rules.
    o.keep_largest =
        std::max(o.keep_largest, static_cast<size_t>(std::max(context.options().top_n, 0)));
    return ComputeIdleGaps(context, o);
  });
}

StatusOr<IdleGapsResult> ComputeIdleGaps(AnalysisContext& context, const IdleGapsOptions& options) {
  const Trace& trace = context.trace();
  if (options.min_gap_ns < 0) return InvalidArgumentError("min_gap_ns must not be negative");
  IdleGapsResult result;
  result.min_gap_ns = options.min_gap_ns;
  // Keeps the keep_largest longest gaps: the shortest kept one is on top.
  std::priority_queue<IdleGap, std::vector<IdleGap>, LongerGap> kept;

  const auto devices = LaunchingProcesses(context);
  for (const auto& [device, pids] : devices) {
    // The device's busy stretches (the context's "GPU busy" union).
    const std::vector<Interval>& busy = context.gpu().Busy(device);
    if (busy.empty()) continue;
    Interval cur = busy.front();
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

    for (size_t b = 1; b < busy.size(); cur = busy[b++]) {
      const Interval& next = busy[b];
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

      g.sync_ns = sync.Covered(g.start_ns, g.end_ns, &g.after_sync);
      if (g.after_sync) {
        ++d.gaps_after_sync;
        d.idle_after_sync_ns += len;
      }
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
  NameMainApiCalls(trace, devices, result.gaps);
  return result;
}

}  // namespace sightline
