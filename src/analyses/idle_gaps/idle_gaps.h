// Finds stretches where a GPU had no work and says what the host was doing meanwhile.
// Input: one Trace. Output: per device the idle total, a histogram of gap lengths, idle time by
// cause, and the largest gaps with their cause. Units: ns. Definitions: docs/metrics.md, "Idle
// gaps"; the section: docs/analyses/idle_gaps.md.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/idle_gaps/idle_gaps_options.h"
#include "base/status.h"
#include "base/time_units.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// What the host was doing while the GPU idled (docs/metrics.md, "Idle-gap cause").
enum class IdleCause : uint8_t {
  kQueued,       // the next GPU work was already launched when the gap began: a GPU-side wait
  kSynchronize,  // the host was blocked in a synchronize call
  kMemcpy,       // the host was in a memcpy/memset call (e.g. a synchronous pageable copy)
  kLaunch,       // the host was inside launch calls: launch overhead, launching late
  kOtherApi,     // the host was in other CUDA calls (malloc/free, events, ...)
  kHost,         // no CUDA call recorded: host code (Python, scheduling, ...) or not traced
};
inline constexpr int kNumIdleCauses = 6;
const char* IdleCauseName(IdleCause cause);         // "queued", "synchronize", ... (stable keys)
const char* IdleCauseDescription(IdleCause cause);  // one line for the report

// Gap-length histogram buckets: [min_gap, 10 us), [10, 100 us), [100 us, 1 ms), [1, 10 ms),
// [10 ms, inf).
inline constexpr int kNumGapBuckets = 5;
const char* GapBucketLabel(int bucket);  // "<10 us", "10-100 us", ...
int GapBucketOf(DurationNs gap_ns);

// One stretch [start_ns, end_ns) with no kernel or memory operation running on `device`.
struct IdleGap {
  int32_t device = 0;
  TimeNs start_ns = 0, end_ns = 0;
  IdleCause cause = IdleCause::kHost;
  // The next GPU work (the one that ends the gap) has a launching call and that call ended after
  // the gap began. -1 unknown (not linked), 0 no (queued), 1 yes.
  int8_t launched_late = -1;
  // A synchronize call was in progress when the gap began: the host had been waiting for the GPU
  // to drain, so the work after the gap starts from an empty queue (a sync in the loop).
  bool after_sync = false;
  // How much of the gap each kind of host activity covers (union of the calls of that class on
  // the device's launching processes); host_ns = the part no API call covers.
  DurationNs sync_ns = 0, memcpy_ns = 0, launch_ns = 0, other_api_ns = 0, host_ns = 0;
  // The GPU work that ended just before and started just after the gap: kernel row, or
  // kernels.size() + memop row; -1 none.
  int64_t prev_work = -1, next_work = -1;
  // The API call name with the most time inside the gap (summed over its calls by the device's
  // processes), e.g. cuLibraryLoadData for lazy module loading; empty when none. Set for the
  // gaps IdleGapsResult keeps.
  StringId main_api;
  DurationNs main_api_ns = 0;

  DurationNs dur_ns() const { return end_ns - start_ns; }
};

struct DeviceIdle {
  int32_t device = 0;
  TimeNs first_start_ns = 0, last_end_ns = 0;  // the device's active span
  DurationNs busy_ns = 0;                      // union of kernels and memory operations
  DurationNs idle_ns = 0;                      // sum of gaps >= min_gap_ns
  int64_t gaps = 0;
  DurationNs short_idle_ns = 0;  // sum of gaps < min_gap_ns (launch jitter)
  int64_t short_gaps = 0;
  DurationNs largest_gap_ns = 0;
  int64_t gaps_after_sync = 0;  // counted gaps with after_sync
  DurationNs idle_after_sync_ns = 0;
  std::array<int64_t, kNumGapBuckets> bucket_count{};
  std::array<DurationNs, kNumGapBuckets> bucket_ns{};
  std::array<int64_t, kNumIdleCauses> cause_count{};
  std::array<DurationNs, kNumIdleCauses> cause_ns{};

  DurationNs span_ns() const { return last_end_ns - first_start_ns; }
};

struct IdleGapsResult {
  DurationNs min_gap_ns = 0;
  std::vector<DeviceIdle> devices;  // devices with GPU work, by id
  std::vector<IdleGap> gaps;        // the keep_largest longest gaps, longest first
};

StatusOr<IdleGapsResult> ComputeIdleGaps(AnalysisContext& context, const IdleGapsOptions& options);
// The idle gaps with the context's options (AnalyzeOptions::idle_gaps; at least the top_n largest
// gaps kept with their details), computed once per trace: what the section and the rules read.
StatusOr<const IdleGapsResult*> CachedIdleGaps(AnalysisContext& context);

// Registry entry: the "idle_gaps" section.
Status RunIdleGapsSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
