// Reads the numbers of one kernel out of an ncu export into NcuKernelAnalysis: durations in ns,
// sizes in bytes, bandwidth in GB/s, percentages as printed; NaN or -1 when absent. The mapping
// of details-page labels to raw-page metric names is listed in docs/kernel/ncu.md.
#pragma once

#include "importers/ncu/ncu_csv.h"
#include "kernel/ncu_analysis.h"

namespace sightline {

void ReadNcuMetrics(const NcuKernel& kernel, NcuKernelAnalysis& analysis);

// Warp stall reasons, from smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio
// (raw page), else from PC-sampling counts smsp__pcsamp_warps_issue_stalled_<reason>.
void ReadNcuStalls(const NcuKernel& kernel, NcuKernelAnalysis& analysis);

}  // namespace sightline
