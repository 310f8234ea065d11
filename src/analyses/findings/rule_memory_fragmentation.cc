// Rule memory_fragmentation: at the peak of allocated memory the caching allocator holds far more
// than its tensors use (reserved far above allocated): cached free blocks split too small for the
// next request, or segments sized for shapes that changed. Needs the allocator's totals (PyTorch
// profile_memory). docs/analyses/findings.md, "memory_fragmentation".
#include <fmt/format.h>

#include <algorithm>

#include "analyses/findings/findings.h"
#include "analyses/memory/memory.h"

namespace sightline {
namespace {

constexpr double kMinUnusedShare = 0.25;          // of reserved at the peak
constexpr int64_t kMinUnusedBytes = 256LL << 20;  // below this it does not decide batch size
constexpr double kHighShareOfDevice = 0.80;       // reserved of the device's memory: high

}  // namespace

Status RuleMemoryFragmentation(AnalysisContext& c, std::vector<Finding>& out) {
  if (c.trace().memory_events.size() == 0) return Status::Ok();
  ASSIGN_OR_RETURN(const MemoryResult* r, CachedMemory(c));
  for (const DeviceMemory& d : r->devices) {
    if (!d.allocator_totals || d.reserved_at_peak_bytes < 0) continue;
    const int64_t unused = d.reserved_at_peak_bytes - d.peak_bytes;
    const double share = static_cast<double>(unused) /
                         static_cast<double>(std::max<int64_t>(1, d.reserved_at_peak_bytes));
    if (unused < kMinUnusedBytes || share < kMinUnusedShare) continue;
    Finding f;
    f.id = "memory_fragmentation";
    const bool tight =
        d.total_bytes > 0 && static_cast<double>(d.reserved_at_peak_bytes) >=
                                 kHighShareOfDevice * static_cast<double>(d.total_bytes);
    f.severity = tight ? Severity::kHigh : Severity::kLow;
    f.title = fmt::format(
        "GPU {}: at the peak of {} allocated the caching allocator reserves {}: {} ({:.0f}% of "
        "reserved) is held but unused",
        d.device, FormatBytes(d.peak_bytes), FormatBytes(d.reserved_at_peak_bytes),
        FormatBytes(unused), 100.0 * share);
    f.evidence.push_back({"peak_bytes", "Allocated at the peak", d.peak_bytes, Unit::kBytes});
    f.evidence.push_back(
        {"reserved_bytes", "Reserved at the peak", d.reserved_at_peak_bytes, Unit::kBytes});
    f.evidence.push_back({"unused_bytes", "Reserved but unused", unused, Unit::kBytes});
    f.evidence.push_back({"unused_pct", "Of reserved", 100.0 * share, Unit::kPercent});
    f.evidence.push_back(
        {"max_reserved_bytes", "Most reserved", d.max_reserved_bytes, Unit::kBytes});
    if (d.total_bytes > 0) {
      f.evidence.push_back({"device_bytes", "Device memory", d.total_bytes, Unit::kBytes});
    }
    f.where =
        fmt::format("GPU {} at {}", d.device, FormatDuration(d.peak_ns - c.trace().begin_ns()));
    f.recommendation =
        "Let the allocator grow segments instead of stranding split blocks "
        "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), keep tensor shapes steady across "
        "steps (pad sequence lengths to a few buckets), and free large temporaries before the "
        "peak; a memory snapshot (torch.cuda.memory._dump_snapshot) shows which segments hold "
        "the free blocks. torch.cuda.empty_cache() returns cached memory between steps but does "
        "not lower the peak.";
    f.estimated_savings_ns = 0;  // memory, not time: it decides batch and KV-cache size
    f.AddSpan(d.peak_ns, d.peak_ns + 1, d.device);
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
