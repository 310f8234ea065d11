// Memory-operation summary: GPU copies and sets per kind (HtoD, DtoH, DtoD, memset, ...) with time
// and size statistics, like `nsys stats --report cuda_gpu_mem_time_sum` and
// `cuda_gpu_mem_size_sum` together, plus a breakdown by source/destination memory kind (pageable,
// pinned, device, ...) with bandwidth. Input: one Trace. Units: ns, bytes, GB/s (10^9 bytes/s).
// docs/analyses/memops_summary.md.
#pragma once

#include <vector>

#include "analyses/common/analysis.h"
#include "base/stats.h"
#include "base/status.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

struct MemOpsSummaryOptions {
  int32_t device = -1;  // only this CUDA device; -1 = all devices (as nsys)
};

// One operation kind: nsys's cuda_gpu_mem_time_sum row (time) and cuda_gpu_mem_size_sum row (size).
struct MemOpKindRow {
  MemOpKind kind = MemOpKind::kOther;
  DurationStats time;         // over operation durations, ns
  DurationStats size;         // over operation sizes, bytes
  double time_pct = 0;        // time.total / MemOpsSummaryResult::total_ns * 100
  double bandwidth_gbps = 0;  // size.total / time.total (bytes per ns = GB/s); 0 when no time
};

// One (kind, source memory, destination memory) path.
struct MemOpPathRow {
  MemOpKind kind = MemOpKind::kOther;
  MemoryKind src_kind = MemoryKind::kUnknown, dst_kind = MemoryKind::kUnknown;
  DurationStats time;  // ns
  int64_t total_bytes = 0;
  double bandwidth_gbps = 0;  // total_bytes / time.total
};

struct MemOpsSummaryResult {
  int64_t count = 0;
  int64_t total_bytes = 0;
  DurationNs total_ns = 0;          // sum of operation durations
  std::vector<MemOpKindRow> kinds;  // total time descending (nsys cuda_gpu_mem_time_sum order)
  std::vector<MemOpPathRow> paths;  // total time descending
};

StatusOr<MemOpsSummaryResult> ComputeMemOpsSummary(AnalysisContext& context,
                                                   const MemOpsSummaryOptions& options);

// Section "memops_summary": facts, the per-kind table and the per-path table.
Status RunMemOpsSummarySection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
