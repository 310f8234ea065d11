// Puts an occupancy result, its grid/wave analysis, the changes that raise occupancy and an
// optional sweep into a Report, so `sightline occupancy` renders through the same text and JSON
// reporters as `analyze`. JSON keys: docs/kernel/occupancy.md.
#pragma once

#include <cstdint>
#include <optional>

#include "kernel/gpu_arch.h"
#include "kernel/occupancy.h"
#include "kernel/occupancy_advice.h"
#include "report/report.h"

namespace sightline {

struct OccupancyReportOptions {
  int64_t grid_blocks = 0;  // 0: no grid given
  std::optional<SweepKind> sweep;
};

Report BuildOccupancyReport(const ResolvedGpu& gpu, const OccupancyInput& input,
                            const OccupancyResult& result, const OccupancyReportOptions& options);

// The value a block limit is reported with: the count, or null (text "-") when unlimited.
Value BlockLimitValue(int limit);

}  // namespace sightline
