// The kernel facts of one trace (a holder of TraceFacts, facts/trace_facts.h): each kernel name's
// category (kernel_category.h), classified once per distinct name, and each device's communication
// against computation, built once, by the first thread that asks (std::call_once). Definitions:
// docs/metrics.md ("Exposed communication").
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "facts/gpu_time_facts.h"
#include "facts/intervals.h"
#include "facts/kernel_category.h"
#include "model/trace.h"

namespace sightline {

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

class KernelFacts {
 public:
  // Borrows `trace` and `gpu` (whose device slots the split shares), which must outlive the facts.
  KernelFacts(const Trace& trace, GpuTimeFacts& gpu) : trace_(trace), gpu_(gpu) {}
  KernelFacts(const KernelFacts&) = delete;
  KernelFacts& operator=(const KernelFacts&) = delete;

  // Category of a kernel name (ClassifyKernel), classified once per distinct name.
  KernelCategory Category(StringId name);
  bool IsCommunication(StringId name) { return Category(name) == KernelCategory::kCommunication; }
  // Communication and compute unions of one device (kernels on no device count on neither side).
  const CommSplit& Comm(int32_t device);
  // Whether the trace has any communication kernel.
  bool HasCommunication();

 private:
  void EnsureComm();

  const Trace& trace_;
  GpuTimeFacts& gpu_;
  std::once_flag category_once_;
  std::unique_ptr<std::atomic<int8_t>[]> category_;  // by StringId; -1 not yet classified
  size_t category_size_ = 0;
  std::once_flag comm_once_;
  bool has_comm_ = false;
  std::vector<CommSplit> comm_;  // by GpuTimeFacts::DeviceSlots() slot
};

}  // namespace sightline
