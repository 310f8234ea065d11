// GPU memory: per device, the memory timeline (allocated, and reserved where the allocator says),
// the peak and its time, what was live at the peak (largest allocations, and grouped by the op and
// the NVTX / annotation range that allocated them), against the device's total (headroom). From
// nsys's --cuda-memory-usage events (CUDA allocations: a caching allocator's blocks appear as its
// cudaMalloc calls) or PyTorch's [memory] events (tensor allocations, with the caching allocator's
// Total Allocated and Total Reserved after each event), or a PyTorch memory snapshot, whose stacks
// also split reserved memory by purpose (weights, KV cache, activations, CUDA graph pools, slack).
// Input: one AnalysisContext. Units: bytes, ns. docs/analyses/memory.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "report/report.h"

namespace sightline {

struct MemoryOptions {
  size_t top_allocations = 10;  // allocations listed as alive at the peak
  size_t top_groups = 10;       // ops / ranges listed as holding memory at the peak
  size_t max_points = 1000;     // timeline points per device; more events are bucketed (max kept)
};

struct LiveAllocation {
  int64_t bytes = 0;
  TimeNs time_ns = 0;  // when it was allocated
  MemoryKind kind = MemoryKind::kUnknown;
  std::string what;       // the allocating API call ("cudaMalloc") or the static symbol
  std::string op;         // the innermost op / range on the allocating thread; "" unknown
  std::string range;      // the innermost NVTX range or annotation around it; "" none
  std::string source;     // the library that asked for it (recorder); "" unknown
  std::string purpose;    // what it is for (PurposeLabel), where the events say; "" unknown
  bool pooled = false;    // from a stream-ordered pool (cudaMallocAsync)
  bool predates = false;  // allocated before the events (known from a snapshot's dump): no time
};

// Memory by purpose at one moment (docs/metrics.md, "Memory by purpose"): the allocator's
// reserved memory split so that the rows add up to it, in this order, none dropped.
enum PurposeRowIndex : int {
  kPurposeWeights,
  kPurposeKvCache,
  kPurposeActivations,
  kPurposeGraphPools,
  kPurposeOther,
  kPurposeUnknown,
  kPurposeSlack,
  kPurposeRows
};
const char* PurposeLabel(int row);  // "weights", "KV cache", ..., "allocator slack"

struct PurposeRow {
  std::string purpose;      // PurposeLabel
  int64_t allocations = 0;  // live allocations of this purpose (none for slack)
  int64_t bytes = 0;
  std::string site;  // the call site holding the most of it ("" none; "(unknown)" unnamed)
  int64_t site_bytes = 0;
  int64_t max_bytes = 0;  // the most at any moment of the events, and when
  TimeNs max_ns = 0;
};

struct PurposeSplit {
  TimeNs time_ns = 0;
  int64_t reserved_bytes = 0;    // what the rows add up to (allocated where reserved is unknown)
  std::vector<PurposeRow> rows;  // kPurposeRows of them; empty when the events say no purpose
};

// A stream-ordered memory pool (cudaMallocAsync's default pool or one of cudaMemPoolCreate) seen
// in the events: its size is what it holds from the device, whether allocated from or not.
struct MemoryPool {
  uint64_t address = 0;         // base address (an identifier)
  int64_t allocations = 0;      // allocations from it
  int64_t max_used_bytes = 0;   // the most allocated from it at once (events the trace saw)
  int64_t max_size_bytes = -1;  // its largest size; -1 unknown (imported pools)
  TimeNs max_size_ns = 0;
  int64_t end_size_bytes = -1;  // its size after the last event (0 destroyed)
  int64_t shrinks = 0;          // pool events that made it smaller (trimmed or destroyed)
};

// Live bytes at the peak grouped by the op or range that allocated them.
struct AllocationGroup {
  std::string name;  // "(unknown)" where the allocating thread had no range
  int64_t allocations = 0;
  int64_t bytes = 0;
};

// One point of the memory timeline: after the events at time_ns.
struct MemoryPoint {
  TimeNs time_ns = 0;
  int64_t allocated = 0;
  int64_t reserved = -1;  // -1 unknown
};

struct DeviceMemory {
  int32_t device = -1;
  // Whether the events carry an allocator's totals (PyTorch): then `peak_bytes` is the
  // allocator's Total Allocated (memory allocated before the trace included), else the most the
  // trace's own allocations held at once.
  bool allocator_totals = false;
  int64_t allocations = 0, frees = 0;
  int64_t allocated_bytes = 0;  // Σ allocated
  int64_t peak_bytes = 0;
  TimeNs peak_ns = 0;
  int64_t end_bytes = 0;                // still allocated at the end of the trace
  int64_t total_bytes = 0;              // the device's memory (0 unknown)
  int64_t unmatched_frees = 0;          // frees of addresses the trace never saw allocated
  int64_t before_bytes = 0;             // allocator totals: allocated before the first event
  int64_t reserved_at_peak_bytes = -1;  // allocator totals: reserved at the allocated peak
  int64_t max_reserved_bytes = -1;      // allocator totals: the most reserved, and when
  TimeNs max_reserved_ns = 0;
  int64_t first_reserved_bytes = -1;    // reserved after the first event
  int64_t end_reserved_bytes = -1;      // reserved after the last event
  std::vector<LiveAllocation> at_peak;  // largest first
  int64_t at_peak_count = 0;
  int64_t at_peak_bytes = 0;  // Σ of the allocations the trace saw alive at the peak
  std::vector<AllocationGroup> by_op, by_range;  // largest first; empty when nothing attributed
  // By the event's own name (a PyTorch snapshot's call site "aten::mm @ model.py:42 forward"):
  // only when no allocation alive at the peak has an op or range.
  std::vector<AllocationGroup> by_site;
  // By the library that asked for it (a recording with --cuda-memory-usage): NCCL, PyTorch's
  // allocator, cuBLAS, the program; only when some allocation alive at the peak has one.
  std::vector<AllocationGroup> by_source;
  // By the phase of the run it was allocated in (analyses/memory/memory_phase.h: graph capture,
  // start-up, warm-up steps, steady steps, after the last step); only when the steps are known.
  std::vector<AllocationGroup> by_phase;
  // Stream-ordered pools. When there are any, `reserved` is what the process holds from CUDA:
  // the pools' sizes plus the live allocations from no pool.
  std::vector<MemoryPool> pools;
  std::vector<MemoryPoint> timeline;
  // Allocations that predate the events (a snapshot's blocks alive at the dump that its history
  // does not explain): in the live tables, not in `allocations` or `allocated_bytes`.
  int64_t predating_allocations = 0, predating_bytes = 0;
  // By purpose, where the events carry one (a PyTorch memory snapshot's stacks): at the peak and
  // after the last event (a snapshot: at the dump).
  PurposeSplit purpose_at_peak, purpose_at_end;
};

struct MemoryResult {
  std::vector<DeviceMemory> devices;  // by id
  // Host memory in the events (nsys: pinned or pageable allocations, e.g. cudaHostAlloc or a
  // pinned staging buffer): not device memory, so left out of every device's figures.
  int64_t host_allocations = 0, host_bytes = 0;
};

StatusOr<MemoryResult> ComputeMemory(AnalysisContext& context, const MemoryOptions& options);
// The memory analysis with the default options, computed once per trace: what the section, the
// rules and the Perfetto export read.
StatusOr<const MemoryResult*> CachedMemory(AnalysisContext& context);

// Registry entry: the "memory" section, when the trace has memory events.
Status RunMemorySection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
