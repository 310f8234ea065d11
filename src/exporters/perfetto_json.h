// Exports a Trace as Chrome/Perfetto JSON trace events, which ui.perfetto.dev, Perfetto's
// trace_processor and chrome://tracing open. Layout: docs/formats/perfetto.md.
//
// One process per GPU ("GPU N: name") with a thread per stream holding every kernel and memory
// operation; host processes and threads with CUDA API calls and ranges (NVTX, PyTorch annotations,
// CPU ops); flow arrows from each launching API call to its kernel or memory operation.
// Timestamps are microseconds (3 decimals, i.e. ns precision) from the trace's first event.
#pragma once

#include <cstdint>
#include <string>

#include "model/trace.h"

namespace sightline {

struct PerfettoExportCounts {  // what was written, for tests and the CLI's summary line
  int64_t kernels = 0, memops = 0, api_calls = 0, ranges = 0, flows = 0;
};

// GPU processes get pid kGpuPidBase + device, so they never collide with host pids.
inline constexpr int64_t kGpuPidBase = 1'000'000'000;

std::string ExportPerfettoJson(const Trace& trace, PerfettoExportCounts* counts = nullptr);

}  // namespace sightline
