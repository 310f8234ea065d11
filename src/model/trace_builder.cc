// TraceBuilder (trace_builder.h): the rows importers add, and Finish, which runs the steps in
// trace_builder_filters.cc (time filters), trace_builder_sort.cc (row order) and
// trace_builder_link.cc (launch links, nesting, thread roles, span).
#include "model/trace_builder.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/utf8.h"

namespace sightline {

StringId TraceBuilder::InternCut(std::string_view s) {
  const size_t keep = Utf8PrefixLength(s, kMaxStringBytes);
  trace_.diagnostics.Add(DiagCode::kStringCut);
  return trace_.strings.Intern(
      fmt::format("{}... [cut: {} bytes in all]", s.substr(0, keep), s.size()));
}

bool TraceBuilder::CheckDuration(TimeNs start, TimeNs end) {
  // Times within +-2^62 ns keep every difference of two of them (the trace's span, a gap, a
  // bucket edge) inside int64.
  constexpr TimeNs kMaxAbsNs = TimeNs{1} << 62;
  if (start <= -kMaxAbsNs || start >= kMaxAbsNs || end <= -kMaxAbsNs || end >= kMaxAbsNs) {
    trace_.diagnostics.Add(DiagCode::kAbsurdTimestamp);
    return false;
  }
  if (end < start) {
    trace_.diagnostics.Add(DiagCode::kNegativeDuration);
    return false;
  }
  // A duration that does not fit in int64 ns (a start near INT64_MIN, an end near INT64_MAX)
  // cannot be real, and every end - start computed later would overflow into a negative time.
  TimeNs duration;
  if (__builtin_sub_overflow(end, start, &duration)) {
    trace_.diagnostics.Add(DiagCode::kAbsurdDuration, 1, "longer than 2^63 ns");
    return false;
  }
  return true;
}

void TraceBuilder::Reserve(size_t kernels, size_t memops, size_t api_calls, size_t ranges) {
  trace_.kernels.ForEachColumn([&](auto& column) { column.reserve(kernels); });
  trace_.memops.ForEachColumn([&](auto& column) { column.reserve(memops); });
  trace_.api_calls.ForEachColumn([&](auto& column) { column.reserve(api_calls); });
  trace_.ranges.ForEachColumn([&](auto& column) { column.reserve(ranges); });
}

void TraceBuilder::AddKernel(const KernelRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  KernelTable& k = trace_.kernels;
  k.start_ns.push_back(row.start_ns);
  k.end_ns.push_back(row.end_ns);
  k.device.push_back(row.device);
  k.stream.push_back(row.stream);
  k.pid.push_back(row.pid);
  k.name.push_back(row.name);
  StringId short_name = row.short_name;
  if (short_name.value == 0 && row.name.value != 0) {
    // Short names are derived once per distinct full name.
    if (row.name.value >= short_name_cache_.size()) short_name_cache_.resize(row.name.value + 1);
    StringId& cached = short_name_cache_[row.name.value];
    if (cached.value == 0) cached = Intern(ShortKernelName(trace_.strings.Get(row.name)));
    short_name = cached;
  }
  k.short_name.push_back(short_name);
  k.correlation.push_back(row.correlation);
  k.grid.push_back(row.grid);
  k.block.push_back(row.block);
  k.registers_per_thread.push_back(row.registers_per_thread);
  k.static_smem_bytes.push_back(row.static_smem_bytes);
  k.dynamic_smem_bytes.push_back(row.dynamic_smem_bytes);
  k.launch_call.push_back(kNoRow);
  k.graph_node.push_back(row.graph_node);
  k.capture_node.push_back(row.capture_node);
  k.capture_ns.push_back(row.capture_ns);
  k.capture_pid.push_back(row.capture_pid);
  k.capture_tid.push_back(row.capture_tid);
}

void TraceBuilder::AddMemOp(const MemOpRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  // No copy or set moves a petabyte; sums of real sizes then stay far inside int64.
  constexpr int64_t kMaxBytes = int64_t{1} << 50;
  if (row.size_bytes < -1 || row.size_bytes > kMaxBytes) {
    trace_.diagnostics.Add(DiagCode::kAbsurdSize);
    return;
  }
  MemOpTable& m = trace_.memops;
  m.start_ns.push_back(row.start_ns);
  m.end_ns.push_back(row.end_ns);
  m.device.push_back(row.device);
  m.stream.push_back(row.stream);
  m.pid.push_back(row.pid);
  m.kind.push_back(row.kind);
  m.src_kind.push_back(row.src_kind);
  m.dst_kind.push_back(row.dst_kind);
  m.size_bytes.push_back(row.size_bytes);
  m.correlation.push_back(row.correlation);
  m.launch_call.push_back(kNoRow);
}

void TraceBuilder::AddApiCall(const ApiCallRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  ApiCallTable& a = trace_.api_calls;
  const std::string_view name = StripApiVersionSuffix(row.name);
  StringId id = Intern(name);
  if (id.value >= api_class_cache_.size()) api_class_cache_.resize(id.value + 1, 0xff);
  uint8_t& cls = api_class_cache_[id.value];
  if (cls == 0xff) cls = static_cast<uint8_t>(ClassifyApiName(name));
  a.start_ns.push_back(row.start_ns);
  a.end_ns.push_back(row.end_ns);
  a.pid.push_back(row.pid);
  a.tid.push_back(row.tid);
  a.name.push_back(id);
  a.kind.push_back(row.kind);
  a.api_class.push_back(static_cast<ApiClass>(cls));
  a.correlation.push_back(row.correlation);
}

void TraceBuilder::AddRange(const RangeRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  RangeTable& r = trace_.ranges;
  r.start_ns.push_back(row.start_ns);
  r.end_ns.push_back(row.end_ns);
  r.pid.push_back(row.pid);
  r.tid.push_back(row.tid);
  r.name.push_back(row.name);
  r.domain.push_back(row.domain);
  r.kind.push_back(row.kind);
  r.shapes.push_back(row.shapes);
}

void TraceBuilder::AddGil(const GilRow& row) {
  if (!CheckDuration(row.start_ns, row.end_ns)) return;
  GilTable& g = trace_.gil;
  g.start_ns.push_back(row.start_ns);
  g.end_ns.push_back(row.end_ns);
  g.pid.push_back(row.pid);
  g.tid.push_back(row.tid);
  g.state.push_back(row.state);
}

void TraceBuilder::AddOsCall(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid,
                             StringId name, const std::vector<StringId>& chain) {
  if (!CheckDuration(start_ns, end_ns)) return;
  OsCallTable& o = trace_.os_calls;
  o.start_ns.push_back(start_ns);
  o.end_ns.push_back(end_ns);
  o.pid.push_back(pid);
  o.tid.push_back(tid);
  o.name.push_back(name);
  o.first_frame.push_back(static_cast<int64_t>(o.frames.size()));
  o.frame_count.push_back(static_cast<int32_t>(chain.size()));
  o.frames.insert(o.frames.end(), chain.begin(), chain.end());
}

void TraceBuilder::AddCollective(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid,
                                 StringId communicator, StringId name, int64_t seq) {
  if (!CheckDuration(start_ns, end_ns)) return;
  CollectiveTable& c = trace_.collectives;
  c.start_ns.push_back(start_ns);
  c.end_ns.push_back(end_ns);
  c.pid.push_back(pid);
  c.tid.push_back(tid);
  c.communicator.push_back(communicator);
  c.name.push_back(name);
  c.seq.push_back(seq);
}

void TraceBuilder::AddOffCpu(TimeNs start_ns, TimeNs end_ns, int32_t pid, int32_t tid) {
  if (!CheckDuration(start_ns, end_ns)) return;
  OffCpuTable& o = trace_.off_cpu;
  o.start_ns.push_back(start_ns);
  o.end_ns.push_back(end_ns);
  o.pid.push_back(pid);
  o.tid.push_back(tid);
}

namespace {

void AddStackSample(StackSampleTable& p, TimeNs time_ns, int32_t pid, int32_t tid,
                    const std::vector<StringId>& stack) {
  p.time_ns.push_back(time_ns);
  p.pid.push_back(pid);
  p.tid.push_back(tid);
  p.first_frame.push_back(static_cast<int64_t>(p.frames.size()));
  p.frame_count.push_back(static_cast<int32_t>(stack.size()));
  p.frames.insert(p.frames.end(), stack.begin(), stack.end());
}

}  // namespace

void TraceBuilder::AddPySample(TimeNs time_ns, int32_t pid, int32_t tid,
                               const std::vector<StringId>& stack) {
  AddStackSample(trace_.py_samples, time_ns, pid, tid, stack);
}

void TraceBuilder::AddCpuSample(TimeNs time_ns, int32_t pid, int32_t tid,
                                const std::vector<StringId>& stack) {
  AddStackSample(trace_.cpu_samples, time_ns, pid, tid, stack);
}

void TraceBuilder::AddDevice(const DeviceInfo& device) {
  for (DeviceInfo& d : trace_.devices) {
    if (d.id == device.id) {
      d = device;
      return;
    }
  }
  trace_.devices.push_back(device);
}

void TraceBuilder::AddProcess(const ProcessInfo& process) {
  for (ProcessInfo& p : trace_.processes) {
    if (p.pid == process.pid) {
      if (!process.name.empty()) p.name = process.name;
      return;
    }
  }
  trace_.processes.push_back(process);
}

void TraceBuilder::AddThread(const ThreadInfo& thread) {
  for (ThreadInfo& t : trace_.threads) {
    if (t.pid == thread.pid && t.tid == thread.tid) {
      if (!thread.name.empty()) t.name = thread.name;
      return;
    }
  }
  trace_.threads.push_back(thread);
}

void TraceBuilder::AddMemoryEvent(const MemoryEventRow& row) {
  // As for copies (AddMemOp): no allocation, and no allocator's total, is a petabyte.
  constexpr int64_t kMaxBytes = int64_t{1} << 50;
  if (row.bytes < -kMaxBytes || row.bytes > kMaxBytes || row.total_allocated > kMaxBytes ||
      row.total_reserved > kMaxBytes || row.pool_size > kMaxBytes) {
    trace_.diagnostics.Add(DiagCode::kAbsurdSize);
    return;
  }
  MemoryEventTable& m = trace_.memory_events;
  m.time_ns.push_back(row.time_ns);
  m.device.push_back(row.device);
  m.pid.push_back(row.pid);
  m.tid.push_back(row.tid);
  m.total_allocated.push_back(row.total_allocated);
  m.total_reserved.push_back(row.total_reserved);
  m.bytes.push_back(row.bytes);
  m.address.push_back(row.address);
  m.kind.push_back(row.kind);
  m.correlation.push_back(row.correlation);
  m.name.push_back(row.name);
  m.pool.push_back(row.pool);
  m.pool_size.push_back(row.pool_size);
  m.source.push_back(row.source);
  m.purpose.push_back(row.purpose);
  m.predates.push_back(row.predates ? 1 : 0);
}

void TraceBuilder::AddCounter(TimeNs time_ns, int32_t device, StringId name, double value) {
  if (!std::isfinite(value)) {
    trace_.diagnostics.Add(DiagCode::kValueNotFinite);
    return;
  }
  CounterTable& c = trace_.counters;
  c.time_ns.push_back(time_ns);
  c.device.push_back(device);
  c.name.push_back(name);
  c.value.push_back(value);
}

Trace TraceBuilder::Finish() {
  DropFarTimes();
  DropAbsurdDurations();
  SortTables();
  LinkLaunches();
  ComputeRangeNesting();
  ComputeThreadRoles();
  ComputeSpan();
  Trace out = std::move(trace_);
  trace_ = Trace();
  short_name_cache_.clear();
  api_class_cache_.clear();
  return out;
}

}  // namespace sightline
