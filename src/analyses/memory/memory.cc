#include "analyses/memory/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "analyses/common/analysis_context.h"
#include "analyses/common/range_at.h"
#include "analyses/memory/memory_phase.h"
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

// The purpose row of an allocation's MemoryPurpose.
int RowOf(MemoryPurpose p) {
  switch (p) {
    case MemoryPurpose::kWeights:
      return kPurposeWeights;
    case MemoryPurpose::kKvCache:
      return kPurposeKvCache;
    case MemoryPurpose::kActivations:
      return kPurposeActivations;
    case MemoryPurpose::kCudaGraphPool:
      return kPurposeGraphPools;
    case MemoryPurpose::kOther:
      return kPurposeOther;
    case MemoryPurpose::kUnknown:
      break;
  }
  return kPurposeUnknown;
}

using PurposeBytes = std::array<int64_t, kPurposeRows>;

// Reserved memory split by purpose (docs/metrics.md, "Memory by purpose"): `live` holds the live
// allocations' bytes by row; what the allocator counts beyond them is unknown; the graph pools'
// segments hold what is allocated in them plus their free space, which is not slack.
PurposeBytes Split(const PurposeBytes& live, int64_t allocated, int64_t reserved,
                   int64_t graph_reserved) {
  PurposeBytes v = live;
  int64_t seen = 0;
  for (int k = 0; k < kPurposeSlack; ++k) seen = SaturatingAdd(seen, live[k]);
  v[kPurposeUnknown] = SaturatingAdd(live[kPurposeUnknown], std::max<int64_t>(allocated - seen, 0));
  const int64_t free_bytes = reserved >= 0 ? std::max<int64_t>(reserved - allocated, 0) : 0;
  const int64_t graph_free =
      std::clamp<int64_t>(graph_reserved - live[kPurposeGraphPools], 0, free_bytes);
  v[kPurposeGraphPools] = SaturatingAdd(live[kPurposeGraphPools], graph_free);
  v[kPurposeSlack] = free_bytes - graph_free;
  return v;
}

// The rows of a PurposeSplit from the bytes by purpose and the live allocations then (rows of
// the memory events): their count and the call site holding the most, per purpose.
PurposeSplit MakeSplit(const Trace& trace, const std::vector<size_t>& live_rows,
                       const PurposeBytes& bytes, const PurposeBytes& max_bytes,
                       const std::array<TimeNs, kPurposeRows>& max_ns, TimeNs time_ns,
                       int64_t reserved) {
  const MemoryEventTable& m = trace.memory_events;
  PurposeSplit split;
  split.time_ns = time_ns;
  split.reserved_bytes = reserved;
  std::array<std::map<std::string_view, int64_t>, kPurposeRows> sites;
  std::array<int64_t, kPurposeRows> count{};
  for (size_t row : live_rows) {
    const int k = RowOf(m.purpose[row]);
    ++count[k];
    int64_t& b = sites[k][trace.str(m.name[row])];
    b = SaturatingAdd(b, m.bytes[row]);
  }
  for (int k = 0; k < kPurposeRows; ++k) {
    PurposeRow& r = split.rows.emplace_back();
    r.purpose = PurposeLabel(k);
    r.allocations = count[k];
    r.bytes = bytes[k];
    r.max_bytes = max_bytes[k];
    r.max_ns = max_ns[k];
    for (const auto& [site, b] : sites[k]) {
      if (b > r.site_bytes) {
        r.site_bytes = b;
        r.site = site.empty() ? "(unknown)" : std::string(site);
      }
    }
  }
  return split;
}

// A row that allocates nothing: it carries only an allocator's new totals (a PyTorch snapshot's
// segment_alloc/free) or a pool's new size (created, trimmed, destroyed).
bool StateOnly(const MemoryEventTable& m, size_t i) {
  return m.bytes[i] == 0 && m.address[i] == 0 && (m.total_allocated[i] >= 0 || m.pool[i] != 0);
}

}  // namespace

const char* PurposeLabel(int row) {
  static constexpr const char* kLabels[kPurposeRows] = {
      "weights", "KV cache", "activations & workspace", "CUDA graph pools",
      "other",   "unknown",  "allocator slack"};
  return row >= 0 && row < kPurposeRows ? kLabels[row] : "";
}

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
    // By purpose (only when some event carries one): live bytes per row, the graph pools'
    // reserved segments, the most each row held and when, and the split at the peak.
    bool purposes = false;
    bool seen_event = false;  // a row that is not a predating one
    PurposeBytes live_purpose{};
    int64_t graph_reserved = 0;
    PurposeBytes max_purpose{};
    std::array<TimeNs, kPurposeRows> max_purpose_ns{};
    PurposeBytes peak_purpose{};
    // The last row that predates the events: the rows before it build the state before the
    // events one allocation at a time, so only from it on is the state a real moment's.
    int64_t last_predating_row = -1;
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
    s.purposes |= m.purpose[i] != MemoryPurpose::kUnknown;
    if (m.predates[i] != 0) s.last_predating_row = static_cast<int64_t>(i);
  }
  for (size_t i = 0; i < m.size(); ++i) {
    if (host(i)) continue;
    State& s = devices[m.device[i]];
    DeviceMemory& d = s.d;
    d.device = m.device[i];
    d.allocator_totals = s.all_totals;
    const bool predates = m.predates[i] != 0;
    const int64_t reserved_before = s.reserved;
    if (StateOnly(m, i)) {
      // the allocator's reserved memory changed; no allocation
    } else if (m.bytes[i] >= 0) {
      if (predates) {
        ++d.predating_allocations;
        d.predating_bytes = SaturatingAdd(d.predating_bytes, m.bytes[i]);
      } else {
        ++d.allocations;
        d.allocated_bytes = SaturatingAdd(d.allocated_bytes, m.bytes[i]);
      }
      s.current = SaturatingAdd(s.current, m.bytes[i]);
      s.live[m.address[i]] = i;
      int64_t& p = s.live_purpose[RowOf(m.purpose[i])];
      p = SaturatingAdd(p, m.bytes[i]);
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
        int64_t& p = s.live_purpose[RowOf(m.purpose[from])];
        p = SaturatingAdd(p, -m.bytes[from]);
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
    // A CUDA graph pool's segment made or freed (a snapshot's segment row of that purpose).
    if (StateOnly(m, i) && m.purpose[i] == MemoryPurpose::kCudaGraphPool && reserved_before >= 0 &&
        s.reserved >= 0) {
      s.graph_reserved = SaturatingAdd(s.graph_reserved, s.reserved - reserved_before);
    }
    if (!s.seen) {
      s.seen = true;
      // Memory allocated before the first event that no event explains.
      if (d.allocator_totals)
        d.before_bytes = std::max<int64_t>(0, m.total_allocated[i] - m.bytes[i]);
    }
    if (!predates && !s.seen_event) {
      s.seen_event = true;
      d.first_reserved_bytes = s.reserved;  // growth is measured over the events themselves
    }
    const int64_t value = d.allocator_totals ? m.total_allocated[i] : s.current;
    PurposeBytes split{};
    const bool settled = !predates || static_cast<int64_t>(i) == s.last_predating_row;
    if (s.purposes && settled) {
      split = Split(s.live_purpose, value, s.reserved, s.graph_reserved);
      for (int k = 0; k < kPurposeRows; ++k) {
        if (split[k] > s.max_purpose[k]) {
          s.max_purpose[k] = split[k];
          s.max_purpose_ns[k] = m.time_ns[i];
        }
      }
    }
    if (settled && value > d.peak_bytes) {  // a moment, not a step of the state before it
      d.peak_bytes = value;
      d.peak_ns = m.time_ns[i];
      d.reserved_at_peak_bytes = s.reserved;
      s.peak_row = static_cast<int64_t>(i);
      s.peak_purpose = split;
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
  const MemoryPhases phases(context);
  for (auto& [id, s] : devices) {
    DeviceMemory& d = s.d;
    if (const DeviceInfo* info = trace.FindDevice(id)) d.total_bytes = info->total_memory_bytes;
    std::vector<size_t> rows;
    for (const auto& [addr, row] : live[id]) rows.push_back(row);
    std::sort(rows.begin(), rows.end(), [&](size_t x, size_t y) {
      return m.bytes[x] != m.bytes[y] ? m.bytes[x] > m.bytes[y] : m.time_ns[x] < m.time_ns[y];
    });
    d.at_peak_count = static_cast<int64_t>(rows.size());
    std::vector<std::pair<std::string, int64_t>> ops, ranges, sites, sources, when;
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
      if (phases.known()) {
        const MemoryPhase phase =
            m.predates[row] != 0 ? MemoryPhase::kBefore : phases.At(pid, tid, m.time_ns[row]);
        when.push_back({MemoryPhaseLabel(phase), m.bytes[row]});
      }
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
      if (s.purposes) a.purpose = PurposeLabel(RowOf(m.purpose[row]));
      a.pooled = m.pool[row] != 0;
      a.predates = m.predates[row] != 0;
    }
    if (s.purposes) {
      const auto held = [](int64_t reserved, int64_t allocated) {
        return reserved >= 0 ? reserved : allocated;
      };
      d.purpose_at_peak = MakeSplit(trace, rows, s.peak_purpose, s.max_purpose, s.max_purpose_ns,
                                    d.peak_ns, held(d.reserved_at_peak_bytes, d.peak_bytes));
      std::vector<size_t> end_rows;
      for (const auto& [addr, row] : s.live) end_rows.push_back(row);
      const PurposeBytes end =
          Split(s.live_purpose, d.end_bytes, d.end_reserved_bytes, s.graph_reserved);
      d.purpose_at_end = MakeSplit(trace, end_rows, end, s.max_purpose, s.max_purpose_ns,
                                   d.timeline.empty() ? 0 : d.timeline.back().time_ns,
                                   held(d.end_reserved_bytes, d.end_bytes));
    }
    if (any_source) d.by_source = Group(sources, options.top_groups);
    d.by_phase = Group(when, options.top_groups);
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
