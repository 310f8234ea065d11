#include "analyses/overview/overview.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "analyses/common/analysis_context.h"
#include "analyses/common/summary_table.h"
#include "base/time_units.h"
#include "facts/intervals.h"

namespace sightline {
namespace {

struct DeviceAcc {
  DeviceUsage usage;
  bool any = false;
};

struct StreamAcc {
  StreamUsage usage;
  UnionAccumulator busy;
};

// Maps keys to dense indexes; consecutive events usually share a key, so the last one is cached.
class DenseIndex {
 public:
  // Returns the index of key and whether it was new.
  std::pair<uint32_t, bool> Get(uint64_t key) {
    if (has_last_ && key == last_key_) return {last_index_, false};
    auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(index_.size()));
    has_last_ = true;
    last_key_ = key;
    last_index_ = it->second;
    return {it->second, inserted};
  }

 private:
  std::unordered_map<uint64_t, uint32_t> index_;
  bool has_last_ = false;
  uint64_t last_key_ = 0;
  uint32_t last_index_ = 0;
};

uint64_t PairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

// Distinct (pid, tid) pairs, skipping runs of the same pair cheaply.
class ThreadSet {
 public:
  void Add(int32_t pid, int32_t tid) {
    const uint64_t key = PairKey(pid, tid);
    if (has_last_ && key == last_) return;
    has_last_ = true;
    last_ = key;
    keys_.insert(key);
  }
  std::vector<uint64_t> Sorted() const {
    std::vector<uint64_t> v(keys_.begin(), keys_.end());
    std::sort(v.begin(), v.end());
    return v;
  }

 private:
  std::unordered_set<uint64_t> keys_;
  bool has_last_ = false;
  uint64_t last_ = 0;
};

}  // namespace

StatusOr<OverviewResult> ComputeOverview(AnalysisContext& context, const OverviewOptions& options) {
  const Trace& trace = context.trace();
  OverviewResult r;
  r.begin_ns = trace.begin_ns();
  r.end_ns = trace.end_ns();
  r.duration_ns = r.end_ns - r.begin_ns;

  const KernelTable& k = trace.kernels;
  const MemOpTable& m = trace.memops;
  EventCounts& c = r.counts;
  c.kernels = static_cast<int64_t>(k.size());
  for (MemOpKind kind : m.kind) ++(kind == MemOpKind::kMemset ? c.memsets : c.memcpys);
  for (ApiKind kind : trace.api_calls.kind) {
    ++(kind == ApiKind::kRuntime ? c.runtime_calls : c.driver_calls);
  }
  for (RangeKind kind : trace.ranges.kind) {
    switch (kind) {
      case RangeKind::kNvtxPushPop:
      case RangeKind::kNvtxStartEnd:
        ++c.nvtx_ranges;
        break;
      case RangeKind::kUserAnnotation:
        ++c.annotations;
        break;
      case RangeKind::kCpuOp:
        ++c.cpu_ops;
        break;
      case RangeKind::kPythonFunction:
        ++c.python_functions;
        break;
    }
  }

  // Devices: those with info first, then any device id seen on GPU events.
  std::vector<DeviceAcc> devices;
  DenseIndex device_index;
  auto device_slot = [&](int32_t id) -> DeviceAcc& {
    auto [i, inserted] = device_index.Get(static_cast<uint32_t>(id));
    if (inserted) {
      devices.emplace_back().usage.device = id;
      devices.back().usage.info = trace.FindDevice(id);
    }
    return devices[i];
  };
  for (const DeviceInfo& d : trace.devices) device_slot(d.id);

  // One pass over kernels and memory operations in start order (both tables are sorted).
  std::vector<StreamAcc> streams;
  DenseIndex stream_index;
  auto add = [&](int32_t device, int32_t stream, TimeNs start, TimeNs end, bool kernel) {
    DeviceAcc& d = device_slot(device);
    if (!d.any) {
      d.any = true;
      d.usage.first_ns = start;
      d.usage.last_ns = end;
    }
    d.usage.last_ns = std::max(d.usage.last_ns, end);
    ++(kernel ? d.usage.kernels : d.usage.memops);
    auto [si, inserted] = stream_index.Get(PairKey(device, stream));
    if (inserted) {
      StreamAcc& s = streams.emplace_back();
      s.usage.device = device;
      s.usage.stream = stream;
    }
    StreamAcc& s = streams[si];
    s.busy.Add(start, end);
    ++(kernel ? s.usage.kernels : s.usage.memops);
  };
  size_t i = 0, j = 0;
  while (i < k.size() || j < m.size()) {
    if (j == m.size() || (i < k.size() && k.start_ns[i] <= m.start_ns[j])) {
      add(k.device[i], k.stream[i], k.start_ns[i], k.end_ns[i], true);
      ++i;
    } else {
      add(m.device[j], m.stream[j], m.start_ns[j], m.end_ns[j], false);
      ++j;
    }
  }

  std::unordered_map<int32_t, DurationNs> span_of_device;
  for (DeviceAcc& d : devices) {
    DeviceUsage& u = d.usage;
    u.active_span_ns = u.last_ns - u.first_ns;
    u.busy_ns = TotalLength(context.gpu().Busy(u.device));
    u.utilization_pct = u.active_span_ns > 0 ? 100.0 * u.busy_ns / u.active_span_ns : 0;
    span_of_device[u.device] = u.active_span_ns;
    r.devices.push_back(u);
  }
  std::sort(r.devices.begin(), r.devices.end(),
            [](const DeviceUsage& a, const DeviceUsage& b) { return a.device < b.device; });
  for (StreamAcc& s : streams) {
    StreamUsage& u = s.usage;
    u.busy_ns = s.busy.total();
    const DurationNs span = span_of_device[u.device];
    u.utilization_pct = span > 0 ? 100.0 * u.busy_ns / span : 0;
    r.streams.push_back(u);
  }
  std::sort(r.streams.begin(), r.streams.end(), [](const StreamUsage& a, const StreamUsage& b) {
    if (a.device != b.device) return a.device < b.device;
    if (a.busy_ns != b.busy_ns) return a.busy_ns > b.busy_ns;
    return a.stream < b.stream;
  });

  // Processes and threads: from the info tables and from every host event.
  ThreadSet threads;
  for (const ThreadInfo& t : trace.threads) threads.Add(t.pid, t.tid);
  const ApiCallTable& a = trace.api_calls;
  for (size_t n = 0; n < a.size(); ++n) threads.Add(a.pid[n], a.tid[n]);
  const RangeTable& rg = trace.ranges;
  for (size_t n = 0; n < rg.size(); ++n) threads.Add(rg.pid[n], rg.tid[n]);
  const GilTable& gil = trace.gil;
  for (size_t n = 0; n < gil.size(); ++n) threads.Add(gil.pid[n], gil.tid[n]);
  std::vector<int32_t> pids;
  for (const ProcessInfo& p : trace.processes) pids.push_back(p.pid);
  for (int32_t pid : k.pid) {
    if (pid >= 0 && (pids.empty() || pids.back() != pid)) pids.push_back(pid);
  }
  const std::vector<uint64_t> thread_keys = threads.Sorted();
  for (uint64_t key : thread_keys) pids.push_back(static_cast<int32_t>(key >> 32));
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  for (int32_t pid : pids) {
    if (pid < 0) continue;
    ProcessUsage& p = r.processes.emplace_back();
    p.pid = pid;
    for (const ProcessInfo& info : trace.processes) {
      if (info.pid == pid) p.name = info.name;
    }
  }
  for (uint64_t key : thread_keys) {
    const int32_t pid = static_cast<int32_t>(key >> 32);
    if (pid < 0) continue;
    ++r.threads;
    auto it = std::lower_bound(r.processes.begin(), r.processes.end(), pid,
                               [](const ProcessUsage& p, int32_t value) { return p.pid < value; });
    if (it != r.processes.end() && it->pid == pid) ++it->threads;
  }
  return r;
}

Status RunOverviewSection(AnalysisContext& context, int input, Report& report) {
  const Trace& trace = context.trace();
  const AnalyzeOptions& options = context.options();
  ASSIGN_OR_RETURN(OverviewResult r, ComputeOverview(context, OverviewOptions{}));
  Section& s = report.AddSection("overview", "Overview", input);
  s.AddFact("begin_ns", "Trace begins", r.begin_ns, Unit::kTimestampNs);
  s.AddFact("end_ns", "Trace ends", r.end_ns, Unit::kTimestampNs);
  s.AddFact("duration_ns", "Duration", r.duration_ns, Unit::kDurationNs);
  if (trace.source.rank >= 0) {
    s.AddFact("rank", "Rank", int64_t{trace.source.rank}, Unit::kNumber);
  }
  if (trace.source.world_size > 0) {
    s.AddFact("world_size", "World size", int64_t{trace.source.world_size}, Unit::kCount);
  }
  // Kineto lists every GPU of the machine in deviceProperties; the table shows the ones with work.
  int64_t used = 0;
  for (const DeviceUsage& u : r.devices) used += u.kernels + u.memops > 0 ? 1 : 0;
  s.AddFact("gpus_used", "GPUs with GPU work", used, Unit::kCount);
  s.AddFact("gpus_known", "GPUs in the trace's device info",
            static_cast<int64_t>(trace.devices.size()), Unit::kCount);
  s.AddFact("processes", "Processes", static_cast<int64_t>(r.processes.size()), Unit::kCount);
  s.AddFact("threads", "Threads", r.threads, Unit::kCount);
  const EventCounts& c = r.counts;
  s.AddFact("kernels", "Kernels", c.kernels, Unit::kCount);
  s.AddFact("memcpys", "Memory copies", c.memcpys, Unit::kCount);
  s.AddFact("memsets", "Memory sets", c.memsets, Unit::kCount);
  s.AddFact("runtime_calls", "CUDA runtime calls", c.runtime_calls, Unit::kCount);
  s.AddFact("driver_calls", "CUDA driver calls", c.driver_calls, Unit::kCount);
  s.AddFact("nvtx_ranges", "NVTX ranges", c.nvtx_ranges, Unit::kCount);
  s.AddFact("annotations", "PyTorch annotations", c.annotations, Unit::kCount);
  s.AddFact("cpu_ops", "PyTorch CPU ops", c.cpu_ops, Unit::kCount);
  if (c.python_functions > 0) {
    s.AddFact("python_functions", "Python functions", c.python_functions, Unit::kCount);
  }

  Table& d = s.AddTable("devices", "GPUs",
                        {{"device", "Device", Unit::kNumber},
                         {"name", "Name", Unit::kText},
                         {"sm_count", "SMs", Unit::kCount},
                         {"compute_capability", "CC", Unit::kText},
                         {"memory_bytes", "Memory", Unit::kBytes},
                         {"kernels", "Kernels", Unit::kCount},
                         {"memops", "Mem ops", Unit::kCount},
                         {"active_span_ns", "Active span", Unit::kDurationNs},
                         {"busy_ns", "Busy", Unit::kDurationNs},
                         {"utilization_pct", "Utilization", Unit::kPercent}});
  for (const DeviceUsage& u : r.devices) {
    if (used > 0 && u.kernels + u.memops == 0) continue;
    std::vector<Value>& row = d.rows.emplace_back();
    row.emplace_back(int64_t{u.device});
    if (u.info != nullptr) {
      row.emplace_back(u.info->name);
      row.emplace_back(u.info->sm_count > 0 ? Value(int64_t{u.info->sm_count}) : Value());
      row.emplace_back(u.info->cc_major > 0 ? Value(std::to_string(u.info->cc_major) + "." +
                                                    std::to_string(u.info->cc_minor))
                                            : Value());
      row.emplace_back(u.info->total_memory_bytes > 0 ? Value(u.info->total_memory_bytes)
                                                      : Value());
    } else {
      row.insert(row.end(), {Value(), Value(), Value(), Value()});
    }
    row.emplace_back(u.kernels);
    row.emplace_back(u.memops);
    row.emplace_back(u.active_span_ns);
    row.emplace_back(u.busy_ns);
    row.emplace_back(u.utilization_pct);
  }
  d.note =
      "Busy = union of kernel and memory-operation intervals; utilization = busy / active "
      "span (first to last GPU event on the device).";
  if (used > 0 && static_cast<size_t>(used) < r.devices.size()) {
    d.note += " " + std::to_string(r.devices.size() - used) +
              " more GPU(s) in the device info had no work in this trace.";
  }

  Table& st = s.AddTable("streams", "Streams",
                         {{"device", "Device", Unit::kNumber},
                          {"stream", "Stream", Unit::kNumber},
                          {"kernels", "Kernels", Unit::kCount},
                          {"memops", "Mem ops", Unit::kCount},
                          {"busy_ns", "Busy", Unit::kDurationNs},
                          {"utilization_pct", "Utilization", Unit::kPercent}});
  const size_t limit = std::min(r.streams.size(), BigTableRowLimit(options));
  for (size_t n = 0; n < limit; ++n) {
    const StreamUsage& u = r.streams[n];
    st.rows.push_back(
        {int64_t{u.device}, int64_t{u.stream}, u.kernels, u.memops, u.busy_ns, u.utilization_pct});
  }
  SetTruncation(st, r.streams.size(), limit);
  st.note = "Stream utilization = the stream's busy time / its device's active span.";

  Table& p = s.AddTable("processes", "Processes",
                        {{"pid", "PID", Unit::kNumber},
                         {"name", "Name", Unit::kText},
                         {"threads", "Threads", Unit::kCount}});
  const size_t plimit = std::min(r.processes.size(), BigTableRowLimit(options));
  for (size_t n = 0; n < plimit; ++n) {
    const ProcessUsage& u = r.processes[n];
    p.rows.push_back({int64_t{u.pid}, u.name, u.threads});
  }
  SetTruncation(p, r.processes.size(), plimit);

  // Utilization over time, one series per device with work: the busy share of each of
  // kUtilizationBuckets equal buckets of the trace span. x = bucket start relative to the trace
  // begin (the same origin as the iterations table's start column).
  const TimeNs origin = trace.begin_ns();
  DurationNs span = 0;
  // A span beyond int64 (hostile timestamps at both ends) has no buckets to draw.
  if (!__builtin_sub_overflow(trace.end_ns(), origin, &span) && span > 0) {
    for (const DeviceUsage& u : r.devices) {
      if (u.kernels + u.memops == 0) continue;
      const std::vector<Interval>& merged = context.gpu().Busy(u.device);
      Series& se = s.series.emplace_back();
      se.key = "utilization_device_" + std::to_string(u.device);
      se.title = "GPU " + std::to_string(u.device) + " utilization over time";
      se.x_unit = Unit::kDurationNs;
      se.y_unit = Unit::kPercent;
      se.time_axis = true;
      for (int b = 0; b < kUtilizationBuckets; ++b) {
        // In 128 bits: span x bucket overflows int64 for spans beyond about 10^17 ns.
        const TimeNs a =
            origin + static_cast<TimeNs>(static_cast<__int128>(span) * b / kUtilizationBuckets);
        const TimeNs e = origin + static_cast<TimeNs>(static_cast<__int128>(span) * (b + 1) /
                                                      kUtilizationBuckets);
        se.x.push_back(static_cast<double>(a - origin));
        se.y.push_back(e > a ? 100.0 * static_cast<double>(BusyWithin(merged, a, e)) /
                                   static_cast<double>(e - a)
                             : 0.0);
      }
    }
  }
  return Status::Ok();
}

}  // namespace sightline
