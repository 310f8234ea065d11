// Rule memory_near_capacity: the peak of the memory the trace saw taken from a device (the
// allocator's reserved memory where known, else the peak of the trace's allocations) is close to
// the device's total memory: little headroom for a larger batch, longer sequences or a larger KV
// cache, and a risk of out-of-memory on a longer input. docs/analyses/findings.md,
// "memory_near_capacity".
#include <fmt/format.h>

#include <algorithm>

#include "analyses/findings/findings.h"
#include "analyses/memory/memory.h"

namespace sightline {
namespace {

constexpr double kNearCapacityMinShare = 0.90;   // of the device's memory
constexpr double kNearCapacityHighShare = 0.97;  // past this an OOM is one longer request away

}  // namespace

Status RuleMemoryNearCapacity(AnalysisContext& c, std::vector<Finding>& out) {
  if (c.trace().memory_events.size() == 0) return Status::Ok();
  ASSIGN_OR_RETURN(const MemoryResult* r, CachedMemory(c));
  for (const DeviceMemory& d : r->devices) {
    if (d.total_bytes <= 0) continue;
    const int64_t held = std::max(d.peak_bytes, d.max_reserved_bytes);
    const double share = static_cast<double>(held) / static_cast<double>(d.total_bytes);
    if (share < kNearCapacityMinShare) continue;
    Finding f;
    f.id = "memory_near_capacity";
    f.severity = share >= kNearCapacityHighShare ? Severity::kHigh : Severity::kMedium;
    f.title = fmt::format("GPU {}: memory peaks at {} of the device's {} ({:.1f}%), {} headroom",
                          d.device, FormatBytes(held), FormatBytes(d.total_bytes), 100.0 * share,
                          FormatBytes(d.total_bytes - held));
    f.evidence.push_back({"held_bytes",
                          d.max_reserved_bytes >= 0 ? "Most reserved" : "Peak the trace saw", held,
                          Unit::kBytes});
    f.evidence.push_back({"device_bytes", "Device memory", d.total_bytes, Unit::kBytes});
    f.evidence.push_back({"share_pct", "Of the device", 100.0 * share, Unit::kPercent});
    f.where = fmt::format(
        "GPU {} at {}", d.device,
        FormatDuration((d.max_reserved_bytes >= d.peak_bytes ? d.max_reserved_ns : d.peak_ns) -
                       c.trace().begin_ns()));
    f.recommendation =
        "Make room before raising the batch or the context length: size the KV cache from the "
        "measured peak (vLLM gpu_memory_utilization, TensorRT-LLM free_gpu_memory_fraction), "
        "quantize weights or the KV cache, free activations earlier (no_grad/inference_mode), "
        "and check the peak after CUDA-graph capture and quantization, which often raise it.";
    f.estimated_savings_ns = 0;  // memory, not time
    f.AddSpan(d.peak_ns, d.peak_ns + 1, d.device);
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
