#include "facts/gpu_time_facts.h"

#include <algorithm>

namespace sightline {

void GpuTimeFacts::EnsureBusy() {
  std::call_once(busy_once_, [this] {
    const KernelTable& k = trace_.kernels;
    const MemOpTable& m = trace_.memops;
    // One slot per distinct device id (work on no device, id < 0, counts on none), with room for
    // one interval per operation: growing the unions by doubling would write every interval into
    // fresh memory several times (page faults on fresh memory are costly on VMs).
    std::vector<size_t> ops;
    auto count = [&](int32_t d) {
      if (d < 0) return;
      const uint32_t s = device_slots_.Add(d);
      if (s == ops.size()) ops.push_back(0);
      ++ops[s];
    };
    for (int32_t d : k.device) count(d);
    for (int32_t d : m.device) count(d);
    busy_.resize(device_slots_.size());
    for (size_t s = 0; s < busy_.size(); ++s) busy_[s].reserve(ops[s]);
    // One two-way merge of the start-sorted tables feeds every device's union.
    size_t i = 0, j = 0;
    std::pair<int32_t, int32_t> last{INT32_MIN, INT32_MIN};
    auto note = [&](int32_t pid, int32_t device) {
      if (pid == last.first && device == last.second) return;
      last = {pid, device};
      pid_devices_.push_back(last);
    };
    while (i < k.size() || j < m.size()) {
      if (j == m.size() || (i < k.size() && k.start_ns[i] <= m.start_ns[j])) {
        if (k.device[i] >= 0) {
          AppendToUnion(busy_[device_slots_.Find(k.device[i])], k.start_ns[i], k.end_ns[i]);
        }
        note(k.pid[i], k.device[i]);
        total_kernel_ns_ += k.dur_ns(i);
        ++i;
      } else {
        if (m.device[j] >= 0) {
          AppendToUnion(busy_[device_slots_.Find(m.device[j])], m.start_ns[j], m.end_ns[j]);
        }
        note(m.pid[j], m.device[j]);
        ++j;
      }
    }
    for (size_t s = 0; s < busy_.size(); ++s) {
      if (!busy_[s].empty()) gpu_devices_.push_back(device_slots_.ids()[s]);
    }
    std::sort(gpu_devices_.begin(), gpu_devices_.end());
    std::sort(pid_devices_.begin(), pid_devices_.end());
    pid_devices_.erase(std::unique(pid_devices_.begin(), pid_devices_.end()), pid_devices_.end());
  });
}

const std::vector<std::pair<int32_t, int32_t>>& GpuTimeFacts::PidDevices() {
  EnsureBusy();
  return pid_devices_;
}

const std::vector<int32_t>& GpuTimeFacts::GpuDevices() {
  EnsureBusy();
  return gpu_devices_;
}

const std::vector<Interval>& GpuTimeFacts::Busy(int32_t device) {
  EnsureBusy();
  static const std::vector<Interval> kEmpty;
  const uint32_t s = device_slots_.Find(device);
  if (s == DenseIds::kNone) return kEmpty;
  return busy_[s];
}

DurationNs GpuTimeFacts::TotalKernelTimeNs() {
  EnsureBusy();
  return total_kernel_ns_;
}

const DenseIds& GpuTimeFacts::DeviceSlots() {
  EnsureBusy();
  return device_slots_;
}

}  // namespace sightline
