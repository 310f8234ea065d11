#include "analyses/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyses/analysis_context.h"

namespace sightline {

StatusOr<MemoryResult> ComputeMemory(AnalysisContext& context, const MemoryOptions& options) {
  const Trace& trace = context.trace();
  const MemoryEventTable& m = trace.memory_events;
  // The allocating call's name by (pid, correlation id).
  std::map<std::pair<int32_t, int64_t>, StringId> call_names;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.correlation[i] >= 0) call_names[{m.pid[i], m.correlation[i]}] = StringId();
  }
  if (!call_names.empty()) {
    const ApiCallTable& a = trace.api_calls;
    for (size_t i = 0; i < a.size(); ++i) {
      auto it = call_names.find({a.pid[i], a.correlation[i]});
      if (it != call_names.end()) it->second = a.name[i];
    }
  }
  struct State {
    DeviceMemory d;
    std::unordered_map<uint64_t, size_t> live;  // address -> event row
    int64_t current = 0;
    std::vector<size_t> peak_rows;
  };
  std::map<int32_t, State> devices;
  for (size_t i = 0; i < m.size(); ++i) {
    State& s = devices[m.device[i]];
    s.d.device = m.device[i];
    if (m.bytes[i] >= 0) {
      ++s.d.allocations;
      s.d.allocated_bytes += m.bytes[i];
      s.current += m.bytes[i];
      s.live[m.address[i]] = i;
    } else {
      ++s.d.frees;
      auto it = s.live.find(m.address[i]);
      if (it == s.live.end()) {
        ++s.d.unmatched_frees;  // allocated before the capture: not counted
        continue;
      }
      s.current -= m.bytes[it->second];
      s.live.erase(it);
    }
    if (s.current > s.d.peak_bytes) {
      s.d.peak_bytes = s.current;
      s.d.peak_ns = m.time_ns[i];
      s.peak_rows.clear();
      for (const auto& [addr, row] : s.live) s.peak_rows.push_back(row);
    }
  }
  MemoryResult res;
  for (auto& [id, s] : devices) {
    s.d.end_bytes = s.current;
    if (const DeviceInfo* info = trace.FindDevice(id)) s.d.total_bytes = info->total_memory_bytes;
    std::sort(s.peak_rows.begin(), s.peak_rows.end(), [&](size_t x, size_t y) {
      return m.bytes[x] != m.bytes[y] ? m.bytes[x] > m.bytes[y] : m.time_ns[x] < m.time_ns[y];
    });
    s.d.at_peak_count = static_cast<int64_t>(s.peak_rows.size());
    for (size_t k = 0; k < std::min(options.top_allocations, s.peak_rows.size()); ++k) {
      const size_t row = s.peak_rows[k];
      LiveAllocation& a = s.d.at_peak.emplace_back();
      a.bytes = m.bytes[row];
      a.time_ns = m.time_ns[row];
      a.kind = m.kind[row];
      if (!trace.str(m.name[row]).empty()) {
        a.what = std::string(trace.str(m.name[row]));
      } else if (auto it = call_names.find({m.pid[row], m.correlation[row]});
                 it != call_names.end() && !trace.str(it->second).empty()) {
        a.what = std::string(trace.str(it->second));
      }
    }
    res.devices.push_back(std::move(s.d));
  }
  return res;
}

Status RunMemorySection(AnalysisContext& context, int input, Report& report) {
  if (context.trace().memory_events.size() == 0) return Status::Ok();
  ASSIGN_OR_RETURN(MemoryResult r, ComputeMemory(context, MemoryOptions{}));
  const Trace& trace = context.trace();
  Section& s = report.AddSection("memory", "GPU memory (allocations the trace saw)", input);
  Table& t = s.AddTable("devices", "Per device",
                        {{"device", "GPU", Unit::kNumber},
                         {"allocations", "allocs", Unit::kCount},
                         {"frees", "frees", Unit::kCount},
                         {"allocated_bytes", "allocated", Unit::kBytes},
                         {"peak_bytes", "peak", Unit::kBytes},
                         {"peak_ns", "at", Unit::kTimestampNs},
                         {"end_bytes", "at end", Unit::kBytes},
                         {"total_bytes", "device memory", Unit::kBytes},
                         {"headroom_bytes", "headroom at peak", Unit::kBytes}});
  for (const DeviceMemory& d : r.devices) {
    t.rows.push_back({int64_t{d.device}, d.allocations, d.frees, d.allocated_bytes, d.peak_bytes,
                      d.peak_ns - trace.begin_ns(), d.end_bytes,
                      d.total_bytes > 0 ? Value(d.total_bytes) : Value(),
                      d.total_bytes > 0 ? Value(d.total_bytes - d.peak_bytes) : Value()});
    if (d.unmatched_frees > 0) {
      s.notes.push_back(
          fmt::format("GPU {}: {} frees of memory allocated before the capture (not counted)",
                      d.device, d.unmatched_frees));
    }
  }
  t.note =
      "peak = the most the trace's own allocations held at once; memory allocated before the "
      "capture or by other processes is not in it, and a caching allocator's blocks count as its "
      "cudaMalloc calls (PyTorch: reserved, not allocated); headroom = device memory - peak";
  for (const DeviceMemory& d : r.devices) {
    if (d.at_peak.empty()) continue;
    Table& p = s.AddTable(fmt::format("at_peak_device_{}", d.device),
                          fmt::format("GPU {}: allocations alive at the peak", d.device),
                          {{"bytes", "size", Unit::kBytes},
                           {"share_pct", "of peak", Unit::kPercent},
                           {"kind", "kind", Unit::kText},
                           {"what", "allocated by", Unit::kText},
                           {"time_ns", "allocated at", Unit::kTimestampNs}});
    for (const LiveAllocation& a : d.at_peak) {
      p.rows.push_back({a.bytes, d.peak_bytes > 0 ? 100.0 * a.bytes / d.peak_bytes : 0.0,
                        std::string(MemoryKindName(a.kind)), a.what, a.time_ns - trace.begin_ns()});
    }
    p.total_rows = d.at_peak_count;
  }
  return Status::Ok();
}

}  // namespace sightline
