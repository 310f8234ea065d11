#include "analyses/memory/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyses/common/analysis_context.h"
#include "analyses/common/range_at.h"
#include "base/file_io.h"
#include "base/saturating.h"

namespace sightline {
namespace {

// Groups the live allocations' bytes by a name, largest first, the top `n` kept.
std::vector<AllocationGroup> Group(const std::vector<std::pair<std::string, int64_t>>& items,
                                   size_t n) {
  std::map<std::string, AllocationGroup> groups;
  for (const auto& [name, bytes] : items) {
    AllocationGroup& g = groups[name];
    g.name = name;
    ++g.allocations;
    g.bytes = SaturatingAdd(g.bytes, bytes);
  }
  std::vector<AllocationGroup> out;
  for (auto& [name, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const AllocationGroup& a, const AllocationGroup& b) {
    return a.bytes > b.bytes;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

// At most `max_points` points: consecutive points merged into buckets of equal time, each keeping
// its largest allocated and reserved (so the peak stays visible).
std::vector<MemoryPoint> Thin(std::vector<MemoryPoint> points, size_t max_points) {
  if (points.size() <= max_points || max_points < 2) return points;
  const TimeNs t0 = points.front().time_ns, t1 = points.back().time_ns;
  const size_t buckets = max_points;
  std::vector<MemoryPoint> out;
  for (const MemoryPoint& p : points) {
    const size_t b = t1 > t0 ? static_cast<size_t>(static_cast<double>(p.time_ns - t0) /
                                                   static_cast<double>(t1 - t0) * (buckets - 1))
                             : 0;
    const TimeNs start = t0 + static_cast<TimeNs>(static_cast<double>(t1 - t0) * b / (buckets - 1));
    if (out.empty() || out.back().time_ns != start) {
      out.push_back({start, p.allocated, p.reserved});
    } else {
      out.back().allocated = std::max(out.back().allocated, p.allocated);
      out.back().reserved = std::max(out.back().reserved, p.reserved);
    }
  }
  return out;
}

// A row that allocates nothing: it carries only an allocator's new totals (a PyTorch snapshot's
// segment_alloc/free) or a pool's new size (created, trimmed, destroyed).
bool StateOnly(const MemoryEventTable& m, size_t i) {
  return m.bytes[i] == 0 && m.address[i] == 0 && (m.total_allocated[i] >= 0 || m.pool[i] != 0);
}

}  // namespace

StatusOr<const MemoryResult*> CachedMemory(AnalysisContext& context) {
  return context.results().Get<MemoryResult>(
      "memory", [&context] { return ComputeMemory(context, MemoryOptions{}); });
}

StatusOr<MemoryResult> ComputeMemory(AnalysisContext& context, const MemoryOptions& options) {
  const Trace& trace = context.trace();
  const MemoryEventTable& m = trace.memory_events;
  // The allocating API call by (pid, correlation id): its name and thread.
  std::map<std::pair<int32_t, int64_t>, int32_t> calls;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.correlation[i] >= 0) calls[{m.pid[i], m.correlation[i]}] = kNoRow;
  }
  if (!calls.empty()) {
    const ApiCallTable& a = trace.api_calls;
    for (size_t i = 0; i < a.size(); ++i) {
      auto it = calls.find({a.pid[i], a.correlation[i]});
      if (it != calls.end()) it->second = static_cast<int32_t>(i);
    }
  }
  auto call_of = [&](size_t row) -> int32_t {
    if (m.correlation[row] < 0) return kNoRow;
    auto it = calls.find({m.pid[row], m.correlation[row]});
    return it == calls.end() ? kNoRow : it->second;
  };

  struct State {
    DeviceMemory d;
    bool all_totals = true;
    bool seen = false;
    std::unordered_map<uint64_t, size_t> live;  // address -> event row
    int64_t current = 0;
    int64_t reserved = -1;
    int64_t peak_row = -1;
    // Stream-ordered pools: by address, with the live bytes allocated from each; whether any event
    // names one.
    std::map<uint64_t, MemoryPool> pools;
    std::map<uint64_t, int64_t> pool_used;
    bool has_pools = false;
  };
  // Pinned and pageable allocations are host memory (nsys reports cudaHostAlloc & co. on the
  // device's context): they take no device memory.
  auto host = [&m](size_t i) {
    return m.kind[i] == MemoryKind::kPinned || m.kind[i] == MemoryKind::kPageable;
  };
  MemoryResult res;
  std::map<int32_t, State> devices;
  for (size_t i = 0; i < m.size(); ++i) {
    if (host(i)) {
      if (m.bytes[i] >= 0) {
        ++res.host_allocations;
        res.host_bytes = SaturatingAdd(res.host_bytes, m.bytes[i]);
      }
      continue;
    }
    State& s = devices[m.device[i]];
    s.all_totals &= m.total_allocated[i] >= 0;
    s.has_pools |= m.pool[i] != 0;
  }
  for (size_t i = 0; i < m.size(); ++i) {
    if (host(i)) continue;
    State& s = devices[m.device[i]];
    DeviceMemory& d = s.d;
    d.device = m.device[i];
    d.allocator_totals = s.all_totals;
    if (StateOnly(m, i)) {
      // the allocator's reserved memory changed; no allocation
    } else if (m.bytes[i] >= 0) {
      ++d.allocations;
      d.allocated_bytes = SaturatingAdd(d.allocated_bytes, m.bytes[i]);
      s.current = SaturatingAdd(s.current, m.bytes[i]);
      s.live[m.address[i]] = i;
      if (m.pool[i] != 0) {
        MemoryPool& p = s.pools[m.pool[i]];
        ++p.allocations;
        int64_t& used = s.pool_used[m.pool[i]];
        used = SaturatingAdd(used, m.bytes[i]);
        p.max_used_bytes = std::max(p.max_used_bytes, used);
      }
    } else {
      ++d.frees;
      auto it = s.live.find(m.address[i]);
      if (it == s.live.end()) {
        ++d.unmatched_frees;  // allocated before the capture
      } else {
        const size_t from = it->second;
        s.current = SaturatingAdd(s.current, -m.bytes[from]);
        if (m.pool[from] != 0) {
          int64_t& used = s.pool_used[m.pool[from]];
          used = SaturatingAdd(used, -m.bytes[from]);
        }
        s.live.erase(it);
      }
    }
    if (m.pool[i] != 0) {
      MemoryPool& p = s.pools[m.pool[i]];
      p.address = m.pool[i];
      if (m.pool_size[i] >= 0) {
        if (m.pool_size[i] > p.max_size_bytes) {
          p.max_size_bytes = m.pool_size[i];
          p.max_size_ns = m.time_ns[i];
        }
        if (StateOnly(m, i) && p.end_size_bytes >= 0 && m.pool_size[i] < p.end_size_bytes) {
          ++p.shrinks;
        }
        p.end_size_bytes = m.pool_size[i];
      }
    }
    if (m.total_reserved[i] >= 0) {
      s.reserved = m.total_reserved[i];
    } else if (s.has_pools && !d.allocator_totals) {
      // What the process holds from CUDA: everything allocated, plus the part of each pool's size
      // that nothing is allocated from.
      int64_t held = s.current;
      for (const auto& [address, p] : s.pools) {
        held += std::max<int64_t>(p.end_size_bytes - s.pool_used[address], 0);
      }
      s.reserved = held;
    }
    if (!s.seen) {
      s.seen = true;
      if (d.allocator_totals)
        d.before_bytes = std::max<int64_t>(0, m.total_allocated[i] - m.bytes[i]);
      d.first_reserved_bytes = s.reserved;
    }
    const int64_t value = d.allocator_totals ? m.total_allocated[i] : s.current;
    if (value > d.peak_bytes) {
      d.peak_bytes = value;
      d.peak_ns = m.time_ns[i];
      d.reserved_at_peak_bytes = s.reserved;
      s.peak_row = static_cast<int64_t>(i);
    }
    if (s.reserved > d.max_reserved_bytes) {
      d.max_reserved_bytes = s.reserved;
      d.max_reserved_ns = m.time_ns[i];
    }
    if (!d.timeline.empty() && d.timeline.back().time_ns == m.time_ns[i]) {
      d.timeline.back().allocated = value;
      d.timeline.back().reserved = s.reserved;
    } else {
      d.timeline.push_back({m.time_ns[i], value, s.reserved});
    }
    d.end_bytes = value;
    d.end_reserved_bytes = s.reserved;
  }

  // What was live at each device's peak: the events replayed up to the peak's row.
  std::map<int32_t, std::unordered_map<uint64_t, size_t>> live;
  for (size_t i = 0; i < m.size(); ++i) {
    if (host(i)) continue;
    const State& s = devices[m.device[i]];
    if (static_cast<int64_t>(i) > s.peak_row) continue;
    auto& l = live[m.device[i]];
    if (StateOnly(m, i)) continue;
    if (m.bytes[i] >= 0) {
      l[m.address[i]] = i;
    } else {
      l.erase(m.address[i]);
    }
  }
  RangeAt range_at(trace);
  for (auto& [id, s] : devices) {
    DeviceMemory& d = s.d;
    if (const DeviceInfo* info = trace.FindDevice(id)) d.total_bytes = info->total_memory_bytes;
    std::vector<size_t> rows;
    for (const auto& [addr, row] : live[id]) rows.push_back(row);
    std::sort(rows.begin(), rows.end(), [&](size_t x, size_t y) {
      return m.bytes[x] != m.bytes[y] ? m.bytes[x] > m.bytes[y] : m.time_ns[x] < m.time_ns[y];
    });
    d.at_peak_count = static_cast<int64_t>(rows.size());
    std::vector<std::pair<std::string, int64_t>> ops, ranges, sites, sources;
    bool any_op = false, any_range = false, any_site = false, any_source = false;
    for (size_t k = 0; k < rows.size(); ++k) {
      const size_t row = rows[k];
      d.at_peak_bytes = SaturatingAdd(d.at_peak_bytes, m.bytes[row]);
      const int32_t call = call_of(row);
      int32_t pid = m.pid[row], tid = m.tid[row];
      if (tid < 0 && call != kNoRow) tid = trace.api_calls.tid[call];
      const RangeAt::Hit hit = range_at.At(pid, tid, m.time_ns[row]);
      std::string op =
          hit.op != kNoRow ? std::string(AutogradOpName(trace.str(trace.ranges.name[hit.op]))) : "";
      std::string range =
          hit.range != kNoRow ? std::string(trace.str(trace.ranges.name[hit.range])) : "";
      any_op |= !op.empty();
      any_range |= !range.empty();
      ops.push_back({op.empty() ? "(no op)" : op, m.bytes[row]});
      ranges.push_back({range.empty() ? "(no range)" : range, m.bytes[row]});
      const std::string_view site = trace.str(m.name[row]);
      any_site |= !site.empty();
      sites.push_back({site.empty() ? "(unknown)" : std::string(site), m.bytes[row]});
      const std::string_view source = FileNameOf(trace.str(m.source[row]));
      any_source |= !source.empty();
      sources.push_back({source.empty() ? "(unknown)" : std::string(source), m.bytes[row]});
      if (k >= options.top_allocations) continue;
      LiveAllocation& a = d.at_peak.emplace_back();
      a.bytes = m.bytes[row];
      a.time_ns = m.time_ns[row];
      a.kind = m.kind[row];
      if (!trace.str(m.name[row]).empty()) {
        a.what = std::string(trace.str(m.name[row]));
      } else if (call != kNoRow) {
        a.what = std::string(trace.str(trace.api_calls.name[call]));
      }
      a.op = std::move(op);
      a.range = std::move(range);
      a.source = std::string(source);
      a.pooled = m.pool[row] != 0;
    }
    if (any_source) d.by_source = Group(sources, options.top_groups);
    for (auto& [address, p] : s.pools) d.pools.push_back(p);
    std::stable_sort(d.pools.begin(), d.pools.end(), [](const MemoryPool& a, const MemoryPool& b) {
      return a.max_size_bytes > b.max_size_bytes;
    });
    if (any_op) d.by_op = Group(ops, options.top_groups);
    if (any_range) d.by_range = Group(ranges, options.top_groups);
    // Without ops or ranges (a PyTorch memory snapshot), the events' own call sites group them.
    if (!any_op && !any_range && any_site) d.by_site = Group(sites, options.top_groups);
    d.timeline = Thin(std::move(d.timeline), options.max_points);
    res.devices.push_back(std::move(d));
  }
  return res;
}

}  // namespace sightline
