// Threads: the host side per thread — which thread launches the GPU work, who holds the Python GIL
// and who waits for it, time in CUDA calls and in NVTX ranges — from the trace's GIL table (nsys
// `-t python-gil`), thread names and roles (trace.threads), and the garbage-collection time of each
// process (GC ranges by name, HostFacts::GcIntervals). Profiler threads (nsys's "NSys
// PySampling") are listed apart and never blamed. Input: one AnalysisContext. Units: ns.
// docs/analyses/threads.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/threads/thread_ranges.h"
#include "analyses/threads/threads_per_iteration.h"
#include "base/status.h"
#include "facts/intervals.h"
#include "report/report.h"

namespace sightline {

struct ThreadsOptions {};

struct ThreadRow {
  int32_t pid = -1, tid = -1;
  std::string name;
  ThreadRole role = ThreadRole::kOther;
  int64_t launches = 0;          // kernel/copy launch calls
  DurationNs cuda_api_ns = 0;    // Σ CUDA API call durations
  DurationNs gil_held_ns = 0;    // union of "Holding GIL"
  DurationNs gil_waited_ns = 0;  // union of "Waiting for GIL"
  DurationNs os_wait_ns = 0;     // union of waiting OS calls outside CUDA calls (Waits)
  DurationNs off_cpu_ns = 0;     // union of its off-CPU intervals
  int64_t py_samples = 0;        // Python samples of the thread
  std::string top_ranges;        // the outermost NVTX ranges it spent most time in (top 3)
  std::string hot_frames;        // its hottest Python frames (top 3, share): innermost frames
                                 // of its samples, else python_function ranges by self time
  bool has_py_frames = false;
  int64_t cpu_samples = 0;  // its CPU (native) samples
  std::string hot_native;   // innermost native frames of its CPU samples (top 3, share)
};

// One OS function the launching thread waited in (outside CUDA calls).
struct OsWaitRow {
  std::string name;
  int64_t calls = 0;
  DurationNs total_ns = 0, longest_ns = 0;
  int64_t with_chain = 0;  // calls with a call chain (nsys keeps one only past its threshold)
  std::string callers;     // where it was called from, by waited time (OsCallers::Top)
};

// One part of the launching thread's host time per iteration of the main set.
struct PerIterationHost {
  std::string key, label;   // "gil_wait_ns", "GIL wait"
  double median_ns = 0;     // over the iterations
  DurationNs worst_ns = 0;  // the largest
  int64_t worst_iteration = -1;
  DurationNs total_ns = 0;
};

// Garbage collection of one process: its GC ranges (names: AnalyzeOptions::gc_range_names).
struct ProcessGc {
  int32_t pid = -1;
  std::string name;
  int64_t collections = 0;  // merged GC intervals
  DurationNs gc_ns = 0;     // their total length
  DurationNs longest_ns = 0;
};

// Who held the GIL while the main launching thread waited for it.
struct GilHolder {
  int32_t pid = -1, tid = -1;
  std::string name;
  ThreadRole role = ThreadRole::kOther;
  DurationNs held_while_waited_ns = 0;
};

struct ThreadsResult {
  bool has_gil = false;                  // the trace has GIL intervals
  bool has_gc = false;                   // the trace has GC ranges
  std::vector<ThreadRow> threads;        // launching first, then by GIL held, profiler threads last
  int32_t main_pid = -1, main_tid = -1;  // the thread with the most launches; -1 none
  DurationNs main_waited_ns = 0;         // its GIL wait
  std::vector<GilHolder> holders;        // by time held while it waited, largest first
  std::vector<ProcessGc> gc;             // processes with GC ranges, by pid
  bool has_os_calls = false, has_off_cpu = false, has_samples = false;
  bool has_py_functions = false;                   // PyTorch python_function ranges (with_stack)
  bool has_cpu_samples = false;                    // nsys CPU samples (native stacks)
  bool has_os_call_chains = false;                 // some OS call has a call chain
  std::vector<OsWaitRow> main_os_waits;            // the launching thread's, longest total first
  std::vector<PerIterationHost> per_iteration;     // the launching thread's, when iterations exist
  ThreadsPerIterationResult per_thread_iteration;  // every thread's, median against the slowest
  ThreadRangesResult ranges;  // NVTX time per thread and name, whole trace and per iteration
};

// The innermost Python frames of thread (pid, tid)'s samples in [a, b): "f (file.py:12) 41%, ...",
// the top `n` by sample count; empty without samples.
std::string HotFrames(const Trace& trace, int32_t pid, int32_t tid, TimeNs a, TimeNs b, size_t n);
// The same over the samples inside disjoint sorted intervals `within`.
std::string HotFrames(const Trace& trace, int32_t pid, int32_t tid,
                      const std::vector<Interval>& within, size_t n);
// The same over the samples of `samples` (trace.py_samples, or trace.cpu_samples for native
// frames).
std::string HotFrames(const Trace& trace, const StackSampleTable& samples, int32_t pid, int32_t tid,
                      const std::vector<Interval>& within, size_t n);

StatusOr<ThreadsResult> ComputeThreads(AnalysisContext& context, const ThreadsOptions& options);
// The threads with the default options, computed once per trace: what the section and the rules
// read.
StatusOr<const ThreadsResult*> CachedThreads(AnalysisContext& context);

// Registry entry: the "threads" section, when the trace has GIL intervals or GC ranges (other
// traces' threads are counted in the overview).
Status RunThreadsSection(AnalysisContext& context, int input, Report& report);

}  // namespace sightline
