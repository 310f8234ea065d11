// Threads: the host side per thread — which thread launches the GPU work, who holds the Python GIL
// and who waits for it, time in CUDA calls and in NVTX ranges — from nsys's GIL tracing (`-t
// python-gil`: push/pop ranges "Holding GIL" / "Waiting for GIL" in the NVTX domain "GIL Trace")
// and the thread names. Profiler threads (nsys's "NSys PySampling") are listed apart and never
// blamed. Input: one AnalysisContext. Units: ns. docs/analyses/threads.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/analysis.h"
#include "base/status.h"
#include "report/report.h"

namespace sightline {

struct ThreadsOptions {};

enum class ThreadRole : uint8_t { kLaunching, kProfiler, kOther };
const char* ThreadRoleName(ThreadRole role);  // "launching", "profiler", "other"

struct ThreadRow {
  int32_t pid = -1, tid = -1;
  std::string name;
  ThreadRole role = ThreadRole::kOther;
  int64_t launches = 0;          // kernel/copy launch calls
  DurationNs cuda_api_ns = 0;    // Σ CUDA API call durations
  DurationNs gil_held_ns = 0;    // union of "Holding GIL"
  DurationNs gil_waited_ns = 0;  // union of "Waiting for GIL"
  std::string top_ranges;        // the NVTX ranges (not GIL) it spent most time in
};

// Who held the GIL while the main launching thread waited for it.
struct GilHolder {
  int32_t pid = -1, tid = -1;
  std::string name;
  ThreadRole role = ThreadRole::kOther;
  DurationNs held_while_waited_ns = 0;
};

struct ThreadsResult {
  bool has_gil = false;
  std::vector<ThreadRow> threads;        // launching first, then by GIL held, profiler threads last
  int32_t main_pid = -1, main_tid = -1;  // the thread with the most launches; -1 none
  DurationNs main_waited_ns = 0;         // its GIL wait
  std::vector<GilHolder> holders;        // by time held while it waited, largest first
};

StatusOr<ThreadsResult> ComputeThreads(AnalysisContext& context, const ThreadsOptions& options);

// Registry entry: the "threads" section, when the trace has GIL ranges (other traces' threads are
// counted in the overview).
Status RunThreadsSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
