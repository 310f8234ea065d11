// Rule alloc_in_loop: device memory is allocated or freed with CUDA calls inside the iteration
// loop after the first iteration (cudaMalloc/cudaFree, cuMemAlloc/cuMemFree; not the stream-ordered
// *Async calls): each call takes the driver's lock, cudaFree synchronizes the device, and a caching
// allocator that still calls them has not reached its steady state. PyTorch's [memory] events add
// the allocator's reserved memory growing inside the loop. The first iteration (warm-up) is left
// out. docs/analyses/findings.md, "alloc_in_loop".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyses/findings/findings.h"

namespace sightline {
namespace {

bool IsAllocOrFree(std::string_view name) {
  const bool alloc = name.find("Malloc") != std::string_view::npos ||
                     name.find("Free") != std::string_view::npos ||
                     name.find("MemAlloc") != std::string_view::npos;
  return alloc && name.find("Async") == std::string_view::npos &&
         name.find("Host") == std::string_view::npos &&
         name.find("Array") == std::string_view::npos;
}

}  // namespace

Status RuleAllocInLoop(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  if (c.loop().MainSet() == nullptr || c.loop().Windows().size() < 2) return Status::Ok();
  const std::vector<LoopWindow>& windows = c.loop().Windows();
  const LoopAfterWarmup loop(c);
  const ApiCallTable& a = trace.api_calls;
  int64_t calls = 0;
  DurationNs call_ns = 0;
  std::map<std::string_view, int64_t> names;
  std::vector<int64_t> hit_windows;
  Finding f;
  for (size_t r = 0; r < a.size(); ++r) {
    if (a.api_class[r] != ApiClass::kAlloc || !IsAllocOrFree(trace.str(a.name[r]))) continue;
    const int64_t w = loop.Find(a.pid[r], a.start_ns[r]);
    if (w < 0) continue;
    ++calls;
    call_ns += a.dur_ns(r);
    ++names[trace.str(a.name[r])];
    hit_windows.push_back(w);
    f.AddSpan(a.start_ns[r], a.end_ns[r], windows[w].device);
  }
  // The allocator's reserved memory growing inside the loop (PyTorch's totals).
  const MemoryEventTable& m = trace.memory_events;
  std::map<int32_t, int64_t> reserved;  // by device
  int64_t growths = 0, grown_bytes = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.total_reserved[i] < 0) continue;
    auto [it, first] = reserved.try_emplace(m.device[i], m.total_reserved[i]);
    const int64_t before = it->second;
    it->second = m.total_reserved[i];
    if (first || m.total_reserved[i] <= before) continue;
    const int64_t w = loop.Find(m.pid[i], m.time_ns[i]);
    if (w < 0) continue;
    ++growths;
    grown_bytes += m.total_reserved[i] - before;
    hit_windows.push_back(w);
    f.AddSpan(m.time_ns[i], m.time_ns[i] + 1, m.device[i]);
  }
  if (calls == 0 && growths == 0) return Status::Ok();
  std::sort(hit_windows.begin(), hit_windows.end());
  hit_windows.erase(std::unique(hit_windows.begin(), hit_windows.end()), hit_windows.end());
  std::string listed;
  for (const auto& [name, count] : names) {
    listed += fmt::format("{}{} x{}", listed.empty() ? "" : ", ", name, count);
  }
  f.id = "alloc_in_loop";
  const int64_t n = loop.iterations();
  const double share = static_cast<double>(hit_windows.size()) / static_cast<double>(n);
  f.severity = share >= 0.5 ? Severity::kMedium : Severity::kLow;
  f.title = fmt::format(
      "Device memory allocated inside the loop: {} in {} of {} iterations after the first",
      calls > 0 ? fmt::format("{} cudaMalloc/cudaFree calls ({})", calls, FormatDuration(call_ns))
                : fmt::format("the allocator's reserved memory grew {} times by {}", growths,
                              FormatBytes(grown_bytes)),
      hit_windows.size(), n);
  if (calls > 0) {
    f.evidence.push_back({"calls", "Allocation calls", calls, Unit::kCount});
    f.evidence.push_back({"call_ns", "Time in them", call_ns, Unit::kDurationNs});
    f.evidence.push_back({"names", "Calls", listed});
  }
  if (growths > 0) {
    f.evidence.push_back({"reserved_growths", "Reserved memory grew", growths, Unit::kCount});
    f.evidence.push_back({"reserved_growth_bytes", "By", grown_bytes, Unit::kBytes});
  }
  f.evidence.push_back({"iterations", "Iterations with them",
                        static_cast<int64_t>(hit_windows.size()), Unit::kCount});
  f.where = c.loop().WindowLabel(windows[hit_windows.front()]);
  f.recommendation =
      "Allocate once, outside the loop: preallocate buffers (or a KV-cache pool) at start-up and "
      "reuse them, let PyTorch's caching allocator reach its steady state in warm-up iterations "
      "(or reserve with torch.cuda.caching_allocator_alloc / a larger first batch), use "
      "cudaMallocAsync/cudaFreeAsync with a memory pool where raw CUDA allocations are needed, "
      "and keep shapes steady so cached blocks fit. CUDA graphs need static allocations anyway.";
  f.estimated_savings_ns = call_ns;  // the calls' own time; cudaFree's device sync comes on top
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
