// The "memory" section of the report: RunMemorySection (analyses/memory/memory.h) renders the
// context's MemoryResult as tables, the memory-over-time chart with its peak, and notes.
#include <fmt/format.h>

#include "analyses/common/analysis_context.h"
#include "analyses/memory/memory.h"

namespace sightline {
namespace {

Value BytesOrNone(int64_t v) { return v >= 0 ? Value(v) : Value(); }

void AddGroupTable(Section& s, const DeviceMemory& d, const std::vector<AllocationGroup>& groups,
                   const char* key, const char* what) {
  if (groups.empty()) return;
  Table& t =
      s.AddTable(fmt::format("at_peak_by_{}_device_{}", key, d.device),
                 fmt::format("GPU {}: memory alive at the peak by allocating {}", d.device, what),
                 {{key, what, Unit::kText},
                  {"allocations", "allocations", Unit::kCount},
                  {"bytes", "size", Unit::kBytes},
                  {"share_pct", "of what the trace saw alive", Unit::kPercent}});
  for (const AllocationGroup& g : groups) {
    t.rows.push_back({g.name, g.allocations, g.bytes,
                      d.at_peak_bytes > 0 ? 100.0 * g.bytes / d.at_peak_bytes : 0.0});
  }
}

// Memory by purpose at one moment; `with_max` adds the most each purpose held at any moment.
void AddPurposeTable(Section& s, const DeviceMemory& d, const PurposeSplit& split,
                     const char* moment_key, const std::string& moment, bool with_max) {
  if (split.rows.empty()) return;
  std::vector<Column> columns = {{"purpose", "purpose", Unit::kText},
                                 {"allocations", "allocations", Unit::kCount},
                                 {"bytes", "size", Unit::kBytes},
                                 {"share_pct", "of reserved", Unit::kPercent}};
  if (with_max) columns.push_back({"max_bytes", "most at once", Unit::kBytes});
  columns.push_back({"site", "largest call site", Unit::kText});
  columns.push_back({"site_bytes", "its size", Unit::kBytes});
  Table& t = s.AddTable(fmt::format("purpose_at_{}_device_{}", moment_key, d.device),
                        fmt::format("GPU {}: memory by purpose {}, {} reserved", d.device, moment,
                                    FormatBytes(split.reserved_bytes)),
                        std::move(columns));
  for (const PurposeRow& r : split.rows) {
    const bool allocations = r.purpose != PurposeLabel(kPurposeSlack);
    std::vector<Value> row{
        r.purpose,   r.allocations,
        r.bytes,     split.reserved_bytes > 0 ? 100.0 * r.bytes / split.reserved_bytes : 0.0,
        r.max_bytes, r.site,
        r.site_bytes};
    if (r.site.empty()) row[6] = Value();
    if (!with_max) row.erase(row.begin() + 4);
    if (!allocations) row[1] = Value();  // slack is no allocation
    t.rows.push_back(std::move(row));
  }
  t.note =
      "the rows add up to what the allocator reserved (docs/metrics.md, \"Memory by purpose\"); "
      "the purpose comes from the allocating stack (docs/analyses/memory.md lists the rules); CUDA "
      "graph pools = allocated in them + their segments' free space; allocator slack = reserved - "
      "allocated - the graph pools' free space; unknown = allocations without a stack, and memory "
      "allocated before the events that nothing explains";
}

}  // namespace

Status RunMemorySection(AnalysisContext& context, int input, Report& report) {
  if (context.trace().memory_events.size() == 0) return Status::Ok();
  ASSIGN_OR_RETURN(const MemoryResult* result, CachedMemory(context));
  const MemoryResult& r = *result;
  const Trace& trace = context.trace();
  const TimeNs origin = trace.begin_ns();
  Section& s = report.AddSection("memory", "GPU memory (allocations the trace saw)", input);
  Table& t = s.AddTable("devices", "Per device",
                        {{"device", "GPU", Unit::kNumber},
                         {"source", "source", Unit::kText},
                         {"allocations", "allocs", Unit::kCount},
                         {"frees", "frees", Unit::kCount},
                         {"allocated_bytes", "allocated", Unit::kBytes},
                         {"peak_bytes", "peak", Unit::kBytes},
                         {"peak_ns", "at", Unit::kTimestampNs},
                         {"reserved_at_peak_bytes", "reserved at peak", Unit::kBytes},
                         {"max_reserved_bytes", "max reserved", Unit::kBytes},
                         {"reserved_growth_bytes", "reserved growth", Unit::kBytes},
                         {"end_bytes", "at end", Unit::kBytes},
                         {"total_bytes", "device memory", Unit::kBytes},
                         {"headroom_bytes", "headroom at peak", Unit::kBytes}});
  for (const DeviceMemory& d : r.devices) {
    const int64_t held = d.reserved_at_peak_bytes >= 0 ? d.reserved_at_peak_bytes : d.peak_bytes;
    t.rows.push_back(
        {int64_t{d.device}, std::string(d.allocator_totals ? "allocator" : "CUDA calls"),
         d.allocations, d.frees, d.allocated_bytes, d.peak_bytes, d.peak_ns - origin,
         BytesOrNone(d.reserved_at_peak_bytes), BytesOrNone(d.max_reserved_bytes),
         d.first_reserved_bytes >= 0 ? Value(d.end_reserved_bytes - d.first_reserved_bytes)
                                     : Value(),
         d.end_bytes, d.total_bytes > 0 ? Value(d.total_bytes) : Value(),
         d.total_bytes > 0 ? Value(d.total_bytes - held) : Value()});
    if (d.unmatched_frees > 0) {
      s.notes.push_back(fmt::format("GPU {}: {} frees of memory allocated before the capture",
                                    d.device, d.unmatched_frees));
    }
    if (d.predating_allocations > 0) {
      s.notes.push_back(fmt::format(
          "GPU {}: {} allocations ({}) alive at the end predate the events: a snapshot's blocks at "
          "the dump that its history does not explain, with their own stacks (in the tables, "
          "allocated at '-')",
          d.device, d.predating_allocations, FormatBytes(d.predating_bytes)));
    }
    if (!d.purpose_at_end.rows.empty()) {
      const PurposeRow& kv = d.purpose_at_end.rows[kPurposeKvCache];
      if (kv.bytes == 0 && kv.max_bytes > 0) {
        s.notes.push_back(fmt::format(
            "GPU {}: the KV cache was freed before the end; it held {} at most, {} from the start",
            d.device, FormatBytes(kv.max_bytes), FormatDuration(kv.max_ns - origin)));
      }
    }
    if (d.allocator_totals && d.before_bytes > 0) {
      s.notes.push_back(fmt::format(
          "GPU {}: {} was already allocated when the trace began (in the peak, not in the tables "
          "of what was alive)",
          d.device, FormatBytes(d.before_bytes)));
    }
  }
  if (r.host_allocations > 0) {
    s.notes.push_back(fmt::format(
        "host allocations (pinned or pageable): {}, {}; not device memory, left out of the "
        "figures",
        r.host_allocations, FormatBytes(r.host_bytes)));
  }
  t.note =
      "source: 'allocator' = PyTorch's [memory] events, peak = the caching allocator's Total "
      "Allocated (tensors, including those allocated before the trace), reserved = what it holds "
      "from CUDA; 'CUDA calls' = nsys's memory usage events, peak = the most the trace's own "
      "allocations held at once (a caching allocator's blocks count as its cudaMalloc calls, "
      "memory of other processes is not in it); reserved growth = reserved at the last event - "
      "at the first; headroom = device memory - reserved at the peak (else - peak)";
  for (const DeviceMemory& d : r.devices) {
    if (!d.at_peak.empty()) {
      // The library and pool columns only where the events say (a recording with
      // --cuda-memory-usage; nsys for pools).
      const bool sources = !d.by_source.empty();
      const bool pooled = !d.pools.empty();
      std::vector<Column> columns = {{"bytes", "size", Unit::kBytes},
                                     {"share_pct", "of peak", Unit::kPercent},
                                     {"kind", "kind", Unit::kText},
                                     {"what", "allocated by", Unit::kText}};
      const bool purposes = !d.purpose_at_peak.rows.empty();
      if (purposes) columns.push_back({"purpose", "purpose", Unit::kText});
      if (sources) columns.push_back({"library", "library", Unit::kText});
      if (pooled) columns.push_back({"pool", "from a pool", Unit::kText});
      columns.push_back({"op", "op", Unit::kText});
      columns.push_back({"range", "range", Unit::kText});
      columns.push_back({"time_ns", "allocated at", Unit::kTimestampNs});
      Table& p = s.AddTable(fmt::format("at_peak_device_{}", d.device),
                            fmt::format("GPU {}: allocations alive at the peak", d.device),
                            std::move(columns));
      for (const LiveAllocation& a : d.at_peak) {
        std::vector<Value> row{a.bytes,
                               d.peak_bytes > 0 ? 100.0 * a.bytes / d.peak_bytes : 0.0,
                               std::string(MemoryKindName(a.kind)),
                               a.what,
                               a.purpose,
                               a.source,
                               std::string(a.pooled ? "yes" : "no"),
                               a.op,
                               a.range,
                               a.time_ns - origin};
        // An allocation from before the events (a snapshot's dump) has no time.
        if (a.predates) row.back() = Value();
        if (!pooled) row.erase(row.begin() + 6);
        if (!sources) row.erase(row.begin() + 5);
        if (!purposes) row.erase(row.begin() + 4);
        p.rows.push_back(std::move(row));
      }
      p.total_rows = d.at_peak_count;
    }
    AddPurposeTable(s, d, d.purpose_at_peak, "peak",
                    fmt::format("at the peak: {} allocated", FormatBytes(d.peak_bytes)), true);
    AddPurposeTable(s, d, d.purpose_at_end, "end",
                    fmt::format("at the end: {} allocated", FormatBytes(d.end_bytes)), false);
    AddGroupTable(s, d, d.by_op, "op", "op");
    AddGroupTable(s, d, d.by_range, "range", "range");
    AddGroupTable(s, d, d.by_site, "site", "call site");
    AddGroupTable(s, d, d.by_source, "library", "library");
    AddGroupTable(s, d, d.by_phase, "phase", "phase");
    if (!d.pools.empty()) {
      Table& pt =
          s.AddTable(fmt::format("pools_device_{}", d.device),
                     fmt::format("GPU {}: stream-ordered memory pools (cudaMallocAsync)", d.device),
                     {{"pool", "pool", Unit::kText},
                      {"allocations", "allocations", Unit::kCount},
                      {"max_used_bytes", "most allocated", Unit::kBytes},
                      {"max_size_bytes", "largest size", Unit::kBytes},
                      {"max_size_ns", "at", Unit::kTimestampNs},
                      {"end_size_bytes", "size at end", Unit::kBytes},
                      {"shrinks", "shrunk", Unit::kCount}});
      for (const MemoryPool& p : d.pools) {
        pt.rows.push_back({fmt::format("0x{:x}", p.address), p.allocations, p.max_used_bytes,
                           BytesOrNone(p.max_size_bytes),
                           p.max_size_bytes >= 0 ? Value(p.max_size_ns - origin) : Value(),
                           BytesOrNone(p.end_size_bytes), p.shrinks});
      }
      pt.note =
          "a pool's size is what it holds from the device whether allocated from or not; with "
          "pools, reserved = the pools' sizes + what was allocated outside them; shrunk = pool "
          "events that made it smaller (cudaMemPoolTrimTo, destroyed)";
    }
    if (d.timeline.size() < 2) continue;
    Series& se = s.series.emplace_back();
    se.key = fmt::format("memory_device_{}", d.device);
    se.title = fmt::format("GPU {} memory over time", d.device);
    se.x_unit = Unit::kTimestampNs;
    se.y_unit = Unit::kBytes;
    se.y_label = d.allocator_totals ? "allocated" : "allocated (CUDA calls the trace saw)";
    for (const MemoryPoint& p : d.timeline) {
      se.x.push_back(static_cast<double>(p.time_ns - origin));
      se.y.push_back(static_cast<double>(p.allocated));
    }
    if (d.max_reserved_bytes >= 0) {
      se.y2_label = "reserved";
      for (const MemoryPoint& p : d.timeline)
        se.y2.push_back(static_cast<double>(std::max<int64_t>(p.reserved, 0)));
    }
    se.marks.push_back({static_cast<double>(d.peak_ns - origin), static_cast<double>(d.peak_bytes),
                        "peak " + FormatBytes(d.peak_bytes)});
  }
  return Status::Ok();
}

}  // namespace sightline
