// The host side of the slowest iteration beside a typical one, as two timelines of the threads
// section (threads.h): lane by lane, the GPUs, the launching thread's CUDA calls, NVTX ranges,
// GIL and OS waits, GC, and the other threads that held the GIL.
#pragma once

#include "analyses/common/analysis_context.h"
#include "analyses/threads/threads.h"
#include "report/report.h"

namespace sightline {

// Adds the two timelines to `s` when the main set has two or more iterations, one of them not an
// outlier, and a launching thread; else nothing.
void AddIterationTimelines(AnalysisContext& context, const ThreadsResult& r, Section& s);

}  // namespace sightline
