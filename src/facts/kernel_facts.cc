#include "facts/kernel_facts.h"

namespace sightline {

KernelCategory KernelFacts::Category(StringId name) {
  std::call_once(category_once_, [this] {
    category_size_ = trace_.strings.size();
    category_ = std::make_unique<std::atomic<int8_t>[]>(category_size_);
    for (size_t i = 0; i < category_size_; ++i) category_[i].store(-1, std::memory_order_relaxed);
  });
  if (name.value >= category_size_) return ClassifyKernel(trace_.str(name));
  // Two threads may classify one name at once: both store the same value.
  std::atomic<int8_t>& slot = category_[name.value];
  int8_t c = slot.load(std::memory_order_relaxed);
  if (c < 0) {
    c = static_cast<int8_t>(ClassifyKernel(trace_.str(name)));
    slot.store(c, std::memory_order_relaxed);
  }
  return static_cast<KernelCategory>(c);
}

void KernelFacts::EnsureComm() {
  std::call_once(comm_once_, [this] {
    const DenseIds& slots = gpu_.DeviceSlots();
    comm_.resize(slots.size());
    const KernelTable& k = trace_.kernels;
    {
      // Room for every kernel of its side (as in GpuTimeFacts' busy unions).
      std::vector<size_t> comm(comm_.size(), 0), compute(comm_.size(), 0);
      for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] < 0) continue;
        ++(IsCommunication(k.name[i]) ? comm : compute)[slots.Find(k.device[i])];
      }
      for (size_t s = 0; s < comm_.size(); ++s) {
        comm_[s].comm.reserve(comm[s]);
        comm_[s].compute.reserve(compute[s]);
      }
    }
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.device[i] < 0) continue;
      CommSplit& c = comm_[slots.Find(k.device[i])];
      if (IsCommunication(k.name[i])) {
        AppendToUnion(c.comm, k.start_ns[i], k.end_ns[i]);
        ++c.comm_kernels;
        has_comm_ = true;
      } else {
        AppendToUnion(c.compute, k.start_ns[i], k.end_ns[i]);
      }
    }
    for (CommSplit& c : comm_) {
      c.comm_ns = TotalLength(c.comm);
      c.compute_ns = TotalLength(c.compute);
      c.overlap_ns = IntersectionLength(c.comm, c.compute);
    }
  });
}

const CommSplit& KernelFacts::Comm(int32_t device) {
  EnsureComm();
  static const CommSplit kEmpty;
  const uint32_t s = gpu_.DeviceSlots().Find(device);
  if (s == DenseIds::kNone) return kEmpty;
  return comm_[s];
}

bool KernelFacts::HasCommunication() {
  EnsureComm();
  return has_comm_;
}

}  // namespace sightline
