// The facts of one trace: what several analyses and finding rules share, each computed once, when
// first asked (DESIGN.md, "Facts and results"). The facts stage sits between the model and the
// analyses and includes no analysis; the analyses see these facts through their AnalysisContext
// (analyses/common/analysis_context.h), which adds the analyze options and the cache of whole
// analysis results. Add a fact here when a second analysis would otherwise compute it again.
// Thread-safe: the analyses of one trace may run on several threads (AnalyzeTrace); each fact is
// built once, under its std::once_flag, by the first thread that asks, while the others wait for
// it. Definitions: docs/metrics.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/dense_ids.h"
#include "base/status.h"
#include "facts/facts_inputs.h"
#include "facts/facts_options.h"
#include "facts/intervals.h"
#include "facts/iterations.h"
#include "facts/kernel_category.h"
#include "facts/launch_projection.h"
#include "model/trace.h"

namespace sightline {

class MetricSamples;      // facts/metric_samples.h
struct GraphKernelPaths;  // facts/graph_kernel_paths.h
struct GraphReplays;      // facts/graph_replays.h

// A stretch of the loop the finding rules look at: one iteration of the main iteration set, or,
// when the trace has no iterations, each device's whole active span (pid = -1: every process).
struct LoopWindow {
  int64_t iteration = -1;  // index in the main set; -1 for a whole-trace window
  TimeNs start_ns = 0, end_ns = 0;
  int32_t pid = -1, tid = -1;
  int32_t device = -1;            // the device whose idle time counts
  const Iteration* it = nullptr;  // null for a whole-trace window
};

// Communication against computation on one device (docs/metrics.md, "Exposed communication").
struct CommSplit {
  std::vector<Interval> comm;     // union of communication kernels
  std::vector<Interval> compute;  // union of all other kernels
  DurationNs comm_ns = 0;         // length of `comm`
  DurationNs compute_ns = 0;      // length of `compute`
  DurationNs overlap_ns = 0;      // |comm ∩ compute|
  int64_t comm_kernels = 0;
  // Time at least one communication kernel runs while no compute kernel runs on the device.
  DurationNs exposed_ns() const { return comm_ns - overlap_ns; }
};

// A thread that issues CUDA launch calls, with how many.
struct LaunchingThread {
  int32_t pid = -1, tid = -1;
  int64_t launches = 0;
};

// One host thread's waits outside the GPU's control (docs/metrics.md, "Host waits"), as unions.
struct ThreadWaits {
  std::vector<Interval> os_wait;  // waiting OS calls (IsWaitingOsCall) outside its CUDA API calls
  std::vector<Interval> off_cpu;  // switched out by the scheduler (nsys --cpuctxsw)
};

// What took one thread's time in [a, b), each part clipped to the window. The parts may overlap
// (a thread waiting for the GIL can be off-CPU too), so they are not added up.
struct HostBreakdown {
  DurationNs gc_ns = 0;        // GC ranges of its process
  DurationNs gil_wait_ns = 0;  // it waited for the GIL
  DurationNs os_wait_ns = 0;   // it waited in OS calls outside CUDA calls
  DurationNs sync_ns = 0;      // host-blocking CUDA calls of its process (BlockingCalls)
  DurationNs off_cpu_ns = 0;   // it was switched out
};

class TraceFacts {
 public:
  // Borrows `trace`, which must outlive the facts.
  explicit TraceFacts(const Trace& trace, FactsOptions options = {}, FactsInputs inputs = {});
  // Owns the trace (the pipeline's case).
  explicit TraceFacts(std::unique_ptr<const Trace> trace, FactsOptions options = {},
                      FactsInputs inputs = {});
  ~TraceFacts();
  TraceFacts(const TraceFacts&) = delete;
  TraceFacts& operator=(const TraceFacts&) = delete;

  const Trace& trace() const { return *trace_; }
  // What the facts read (AnalysisContext::options() shows the analyses the whole AnalyzeOptions,
  // which extend these).
  const FactsOptions& options() const { return options_; }
  // The run's documents the facts read (AnalysisContext::inputs() shows the analyses the whole
  // RunInputs, which extend these).
  const FactsInputs& inputs() const { return inputs_; }

  // --- GPU time -----------------------------------------------------------------------------
  // Device ids with at least one kernel or memory operation, ascending.
  const std::vector<int32_t>& GpuDevices();
  // "GPU busy" of a device: the union of its kernel and memory-operation intervals, disjoint and
  // sorted; empty for a device without work. All devices are computed in one pass.
  const std::vector<Interval>& Busy(int32_t device);
  // The distinct (pid, device) pairs of the GPU work, sorted: the devices each process drives
  // (pid -1: work whose process is unknown).
  const std::vector<std::pair<int32_t, int32_t>>& PidDevices();
  // Sum of kernel durations over all devices (overlaps counted twice, as nsys stats).
  DurationNs TotalKernelTimeNs();

  // --- kernels ------------------------------------------------------------------------------
  // Category of a kernel name (ClassifyKernel), classified once per distinct name.
  KernelCategory Category(StringId name);
  bool IsCommunication(StringId name) { return Category(name) == KernelCategory::kCommunication; }
  // Communication and compute unions of one device (kernels on no device count on neither side).
  const CommSplit& Comm(int32_t device);
  // Whether the trace has any communication kernel.
  bool HasCommunication();

  // --- host -----------------------------------------------------------------------------------
  // GPU work grouped by launching thread (the NVTX -> GPU projection's index).
  const LaunchIndex& Launches();
  // The same with each replayed graph kernel's second point: its capture, else its eager
  // counterpart's launch (LaunchPoints::kLaunchAndCapture with GraphPaths().alignment). What
  // attributes work to the ranges that say what it is (NVTX projection, GPU metrics per range).
  const LaunchIndex& LaunchesWithCapture();
  // Per graph kernel, its capture-time (or aligned) range path and how it was attributed; with
  // inputs().eager_reference, replays left without either are aligned with the reference's
  // eager runs (PathSource::kReference: a path, not a point of this trace, so LaunchesWithCapture
  // has no point for them).
  const GraphKernelPaths& GraphPaths();
  // The CUDA graph replays in launch order, the distinct graphs they replay, the captures.
  const GraphReplays& Replays();
  // The merged intervals of one process's host-blocking calls (IsBlockingCall); empty if none.
  const std::vector<Interval>& BlockingCalls(int32_t pid);
  // The merged garbage-collection ranges of one process (names: options().gc_range_names; by time,
  // whichever thread holds them); pid -1: every process's. Empty when the trace has none.
  const std::vector<Interval>& GcIntervals(int32_t pid);

  // The threads with launch calls (ApiClass kLaunch) of process `pid`, most launches first (ties:
  // lower tid); pid -1: of every process. Empty when none.
  const std::vector<LaunchingThread>& LaunchingThreads(int32_t pid);
  // The thread of `pid` (-1: of any process) with the most launch calls; pid/tid -1 when none.
  LaunchingThread MainLaunchingThread(int32_t pid = -1);
  // The union of one thread's intervals holding / waiting for the Python GIL (trace.gil); empty
  // when it has none. All threads are computed in one pass.
  const std::vector<Interval>& GilHeld(int32_t pid, int32_t tid);
  const std::vector<Interval>& GilWaited(int32_t pid, int32_t tid);
  // Threads with GIL intervals, as (pid, tid), sorted.
  const std::vector<std::pair<int32_t, int32_t>>& GilThreads();
  bool HasGil() const { return trace_->gil.size() > 0; }

  // One thread's OS waits and off-CPU time; empty when the trace has none for it. All threads are
  // computed in one pass.
  const ThreadWaits& Waits(int32_t pid, int32_t tid);
  bool HasOsCalls() const { return trace_->os_calls.size() > 0; }
  bool HasOffCpu() const { return trace_->off_cpu.size() > 0; }
  // The host breakdown of thread (pid, tid) in [a, b).
  HostBreakdown HostWithin(int32_t pid, int32_t tid, TimeNs a, TimeNs b);

  // --- iterations -----------------------------------------------------------------------------
  // The iterations found with options().iterations_regex; an error when the regex is invalid.
  StatusOr<const IterationsResult*> Iterations();
  // The main iteration set; null when there are none (or the regex is invalid).
  const IterationSet* MainSet();
  // The loop windows: the main set's iterations after its warm-up steps, or one whole-span
  // window per busy device.
  const std::vector<LoopWindow>& Windows();
  // The window that holds time `t` of process `pid`; -1 when none.
  int64_t FindWindow(int32_t pid, TimeNs t);
  // "iteration 12 (ProfilerStep#12)" or "whole trace".
  std::string WindowLabel(const LoopWindow& w) const;

  // --- sampled metrics -----------------------------------------------------------------------
  // The GPU metric samples as step functions per (device, metric), for figures over intervals.
  const MetricSamples& Samples();

 private:
  void EnsureBusy();
  void EnsureComm();
  void EnsureWindows();

  std::unique_ptr<const Trace> owned_;
  const Trace* trace_;
  FactsOptions options_;
  FactsInputs inputs_;

  std::once_flag busy_once_;
  std::vector<int32_t> gpu_devices_;
  // Device ids (>= 0) of the GPU work -> slots of busy_ and comm_: ids come from the input and may
  // be anything up to INT32_MAX, so they are never used as indexes or sizes.
  DenseIds device_slots_;
  std::vector<std::vector<Interval>> busy_;  // by device slot
  DurationNs total_kernel_ns_ = 0;
  std::vector<std::pair<int32_t, int32_t>> pid_devices_;

  std::once_flag category_once_;
  std::unique_ptr<std::atomic<int8_t>[]> category_;  // by StringId; -1 not yet classified
  size_t category_size_ = 0;
  std::once_flag comm_once_;
  bool has_comm_ = false;
  std::vector<CommSplit> comm_;  // by device slot

  std::once_flag launches_once_, capture_launches_once_, graph_paths_once_;
  std::unique_ptr<LaunchIndex> launches_, capture_launches_;
  std::unique_ptr<GraphKernelPaths> graph_paths_;
  std::once_flag replays_once_;
  std::unique_ptr<GraphReplays> replays_;
  std::once_flag blocking_once_;
  std::vector<std::pair<int32_t, std::vector<Interval>>> blocking_;  // by pid
  std::once_flag launching_once_;
  std::vector<std::pair<int32_t, std::vector<LaunchingThread>>> launching_;  // by pid; -1 = all
  std::once_flag gil_once_;
  std::vector<std::pair<int32_t, int32_t>> gil_threads_;
  std::vector<std::vector<Interval>> gil_held_, gil_waited_;  // parallel to gil_threads_
  void EnsureGil();
  std::once_flag waits_once_;
  std::vector<std::pair<int32_t, int32_t>> wait_threads_;  // sorted
  std::vector<ThreadWaits> waits_;                         // parallel to wait_threads_
  void EnsureWaits();
  std::once_flag gc_once_;
  std::vector<std::pair<int32_t, std::vector<Interval>>> gc_;  // by pid; pid -1 = all

  std::once_flag iterations_once_;
  std::optional<StatusOr<IterationsResult>> iterations_;
  std::once_flag windows_once_;
  const IterationSet* main_set_ = nullptr;
  std::vector<LoopWindow> windows_;
  std::atomic<size_t> window_hint_{0};  // FindWindow: the last answer (any thread's)

  std::once_flag samples_once_;
  std::unique_ptr<MetricSamples> samples_;
};

// A call that blocks the host until the GPU work it waits for is done: synchronize calls and
// memcpy/memset calls without "Async" in the name.
bool IsBlockingCall(const Trace& trace, size_t api_row);

// An OS runtime call that waits for something else (poll, select, epoll_wait, the pthread condition
// and mutex waits, sem_wait, futex, sleeps, read/recv, waitpid, join), as opposed to one that works
// (open, mmap, stat). docs/metrics.md, "Host waits".
bool IsWaitingOsCall(std::string_view name);

}  // namespace sightline
