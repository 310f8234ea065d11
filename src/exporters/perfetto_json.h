// Exports a Trace as Chrome/Perfetto JSON trace events, which ui.perfetto.dev, Perfetto's
// trace_processor and chrome://tracing open. Layout: docs/formats/perfetto.md.
//
// One process per GPU ("GPU N: name") with a thread per stream holding every kernel and memory
// operation; host processes and threads with CUDA API calls and ranges (NVTX, PyTorch annotations,
// CPU ops); flow arrows from each launching API call to its kernel or memory operation; iteration
// markers (a track per iteration set, in its process and in every GPU process it used) and
// findings (a process with a track per finding, a slice per place it points at); counter tracks
// in each GPU's process for its memory (allocated, reserved) and its sampled GPU metrics. CUDA
// graph kernels carry the host ranges of their capture (or eager counterpart) in their args, and
// each stream that ran them gets a "Stream S: graph ranges" track with a slice per range and
// replay (perfetto_graph_ranges.h).
// Timestamps are microseconds (3 decimals, i.e. ns precision) from the trace's first event.
// The output goes out in chunks, so a trace of 10^7 kernels never sits in memory as one string.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "base/status.h"
#include "facts/iterations.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

struct PerfettoExportCounts {  // what was written, for tests and the CLI's summary line
  int64_t kernels = 0, memops = 0, api_calls = 0, ranges = 0, flows = 0;
  int64_t iterations = 0;     // iteration slices (each iteration once, however many tracks show it)
  int64_t findings = 0;       // finding tracks
  int64_t finding_spans = 0;  // finding slices
  int64_t gil_slices = 0;     // "Holding GIL" / "Waiting for GIL" slices on the GIL tracks
  int64_t gc_slices = 0;      // collections on the GC tracks
  int64_t memory_points = 0;  // points on the GPU memory counter tracks
  int64_t metric_samples = 0;      // GPU metric samples on their counter tracks
  int64_t graph_range_slices = 0;  // slices on the "Stream S: graph ranges" tracks
};

struct PerfettoExportOptions {
  const IterationsResult* iterations = nullptr;    // iteration markers; null: none
  const std::vector<Finding>* findings = nullptr;  // annotations, in rank order; null: none
  // The trace's analysis context, for the host tracks: per thread with GIL data a "GIL" track (its
  // held and waited unions), per process with GC ranges a "Python GC" track (GcIntervals, by the
  // context's --gc-ranges), and the GPU memory counter tracks (the memory analysis's timeline).
  // Null: none of those.
  AnalysisContext* context = nullptr;
  // --eager-reference: the same program run eagerly, recorded separately; its eager runs give
  // node-traced replays without a capture point or an eager run of their own trace their range
  // paths (facts/graph_kernel_paths.h, PathSource::kReference), so their kernels carry ranges and
  // get graph range slices too. Null: none.
  const Trace* eager_reference = nullptr;
};

// GPU processes get pid kGpuPidBase + device, so they never collide with host pids; the findings
// process is kFindingsPid. Iteration tracks are threads kIterationTidBase + set index.
inline constexpr int64_t kGpuPidBase = 1'000'000'000;
inline constexpr int64_t kFindingsPid = kGpuPidBase - 1;
inline constexpr int64_t kIterationTidBase = 2'000'000'000;
// GIL tracks are threads kGilTidBase + the index of the thread among those with GIL data; the GC
// track of a process is thread kGcTid.
inline constexpr int64_t kGilTidBase = 2'100'000'000;
inline constexpr int64_t kGcTid = 2'099'999'999;
// The graph range track of a stream is thread kGraphRangesTidBase + the index of the stream among
// those with attributed graph kernels, in the GPU's process.
inline constexpr int64_t kGraphRangesTidBase = 2'200'000'000;

// Receives the export in consecutive chunks (about 1 MiB each); an error stops the export.
using ChunkSink = std::function<Status(std::string_view chunk)>;

Status WritePerfettoJson(const Trace& trace, const PerfettoExportOptions& options,
                         const ChunkSink& sink, PerfettoExportCounts* counts = nullptr);

// The whole export as one string (tests, small traces).
std::string ExportPerfettoJson(const Trace& trace, PerfettoExportCounts* counts = nullptr,
                               const PerfettoExportOptions& options = {});

}  // namespace sightline
