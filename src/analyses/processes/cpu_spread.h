// A process's CPU time over a stretch of the run, from `sightline record`'s samples (RunProcess:
// the CPU time used in each interval of about 100 ms). What happened inside an interval is not
// known, so each sample's CPU time is spread evenly over its interval: a figure for a stretch
// shorter than a sample is that sample's average rate. Shared by the processes section and the
// run analysis. Units: ns.
#pragma once

#include <vector>

#include "base/time_units.h"
#include "facts/intervals.h"
#include "model/run_processes.h"

namespace sightline {

struct CpuWithin {
  DurationNs cpu_ns = 0;         // CPU time inside [from, to)
  DurationNs while_idle_ns = 0;  // of it, when `busy` covered no time (the GPUs were idle)
};

// The CPU time process `p` used inside [from, to), and the part of it outside `busy` (merged,
// sorted intervals on the same clock as `p`'s samples; empty: all of it counts as idle).
CpuWithin CpuOfProcessWithin(const RunProcess& p, TimeNs from, TimeNs to,
                             const std::vector<Interval>& busy);

}  // namespace sightline
