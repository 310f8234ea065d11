// GPU memory: peak device memory the trace's allocations held, when, and what held it at the peak,
// against the device's total (headroom). From nsys's --cuda-memory-usage events. Only what the
// trace shows: memory allocated before the capture or by other processes is not counted, and a
// caching allocator's (PyTorch's) reserved blocks appear as its cudaMalloc calls, not as tensors.
// Input: one AnalysisContext. Units: bytes, ns. docs/analyses/memory.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/analysis.h"
#include "base/status.h"
#include "report/report.h"

namespace sightline {

struct MemoryOptions {
  size_t top_allocations = 10;  // allocations listed as alive at the peak
};

struct LiveAllocation {
  int64_t bytes = 0;
  TimeNs time_ns = 0;  // when it was allocated
  MemoryKind kind = MemoryKind::kUnknown;
  std::string what;  // the allocating API call ("cudaMalloc") or the static symbol
};

struct DeviceMemory {
  int32_t device = -1;
  int64_t allocations = 0, frees = 0;
  int64_t allocated_bytes = 0;  // Σ allocated
  int64_t peak_bytes = 0;       // max of allocated − freed so far
  TimeNs peak_ns = 0;
  int64_t end_bytes = 0;                // still allocated at the end of the trace
  int64_t total_bytes = 0;              // the device's memory (0 unknown)
  int64_t unmatched_frees = 0;          // frees of addresses the trace never saw allocated
  std::vector<LiveAllocation> at_peak;  // largest first
  int64_t at_peak_count = 0;
};

struct MemoryResult {
  std::vector<DeviceMemory> devices;  // by id
};

StatusOr<MemoryResult> ComputeMemory(AnalysisContext& context, const MemoryOptions& options);

// Registry entry: the "memory" section, when the trace has memory events.
Status RunMemorySection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
