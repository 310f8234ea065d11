// The host facts of one trace (a holder of TraceFacts, facts/trace_facts.h): GPU work by launching
// thread (the launch projection's index), the launching threads, each process's blocking calls and
// GC ranges, each thread's GIL, OS waits and off-CPU time. Each family is built once, in one pass,
// by the first thread that asks (std::call_once). Definitions: docs/metrics.md ("Host waits").
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "facts/facts_options.h"
#include "facts/intervals.h"
#include "facts/launch_projection.h"
#include "model/trace.h"

namespace sightline {

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

class HostFacts {
 public:
  // Borrows `trace` and `options` (the GC range names), which must outlive the facts.
  HostFacts(const Trace& trace, const FactsOptions& options) : trace_(trace), options_(options) {}
  HostFacts(const HostFacts&) = delete;
  HostFacts& operator=(const HostFacts&) = delete;

  // GPU work grouped by launching thread (the NVTX -> GPU projection's index).
  const LaunchIndex& Launches();
  // The merged intervals of one process's host-blocking calls (IsBlockingCall); empty if none.
  const std::vector<Interval>& BlockingCalls(int32_t pid);
  // The merged garbage-collection ranges of one process (names: FactsOptions::gc_range_names; by
  // time, whichever thread holds them); pid -1: every process's. Empty when the trace has none.
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
  bool HasGil() const { return trace_.gil.size() > 0; }

  // One thread's OS waits and off-CPU time; empty when the trace has none for it. All threads are
  // computed in one pass.
  const ThreadWaits& Waits(int32_t pid, int32_t tid);
  bool HasOsCalls() const { return trace_.os_calls.size() > 0; }
  bool HasOffCpu() const { return trace_.off_cpu.size() > 0; }
  // The host breakdown of thread (pid, tid) in [a, b).
  HostBreakdown HostWithin(int32_t pid, int32_t tid, TimeNs a, TimeNs b);

 private:
  void EnsureGil();
  void EnsureWaits();

  const Trace& trace_;
  const FactsOptions& options_;

  std::once_flag launches_once_;
  std::unique_ptr<LaunchIndex> launches_;
  std::once_flag blocking_once_;
  std::vector<std::pair<int32_t, std::vector<Interval>>> blocking_;  // by pid
  std::once_flag gc_once_;
  std::vector<std::pair<int32_t, std::vector<Interval>>> gc_;  // by pid; pid -1 = all
  std::once_flag launching_once_;
  std::vector<std::pair<int32_t, std::vector<LaunchingThread>>> launching_;  // by pid; -1 = all
  std::once_flag gil_once_;
  std::vector<std::pair<int32_t, int32_t>> gil_threads_;
  std::vector<std::vector<Interval>> gil_held_, gil_waited_;  // parallel to gil_threads_
  std::once_flag waits_once_;
  std::vector<std::pair<int32_t, int32_t>> wait_threads_;  // sorted
  std::vector<ThreadWaits> waits_;                         // parallel to wait_threads_
};

// A call that blocks the host until the GPU work it waits for is done: synchronize calls and
// memcpy/memset calls without "Async" in the name.
bool IsBlockingCall(const Trace& trace, size_t api_row);

// An OS runtime call that waits for something else (poll, select, epoll_wait, the pthread condition
// and mutex waits, sem_wait, futex, sleeps, read/recv, waitpid, join), as opposed to one that works
// (open, mmap, stat). docs/metrics.md, "Host waits".
bool IsWaitingOsCall(std::string_view name);

}  // namespace sightline
