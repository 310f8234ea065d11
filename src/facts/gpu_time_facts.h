// The GPU-time facts of one trace (a holder of TraceFacts, facts/trace_facts.h): the devices with
// work, each device's busy union, the (process, device) pairs, the total kernel time. All are
// built in one pass, once, by the first thread that asks (std::call_once). Definitions:
// docs/metrics.md ("GPU busy").
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "base/dense_ids.h"
#include "facts/intervals.h"
#include "model/trace.h"

namespace sightline {

class GpuTimeFacts {
 public:
  // Borrows `trace`, which must outlive the facts.
  explicit GpuTimeFacts(const Trace& trace) : trace_(trace) {}
  GpuTimeFacts(const GpuTimeFacts&) = delete;
  GpuTimeFacts& operator=(const GpuTimeFacts&) = delete;

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
  // Device id (>= 0) of the GPU work -> its slot, so that other per-device facts (KernelFacts'
  // communication split) are sized and indexed alike: ids come from the input and may be anything
  // up to INT32_MAX, so they are never used as indexes or sizes.
  const DenseIds& DeviceSlots();

 private:
  void EnsureBusy();

  const Trace& trace_;
  std::once_flag busy_once_;
  std::vector<int32_t> gpu_devices_;
  DenseIds device_slots_;
  std::vector<std::vector<Interval>> busy_;  // by device slot
  DurationNs total_kernel_ns_ = 0;
  std::vector<std::pair<int32_t, int32_t>> pid_devices_;
};

}  // namespace sightline
