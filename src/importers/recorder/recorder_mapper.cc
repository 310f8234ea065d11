// The records of a recorder file into the TraceBuilder, one function per record type
// (recorder_mapper.h; what maps to what: recorder_importer.h, docs/formats/recorder.md).
#include "importers/recorder/recorder_mapper.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "base/file_io.h"

namespace sightline {
namespace {

using recfmt::RecordType;

// CUpti_ActivityMemcpyKind -> MemOpKind (arrays count as device memory).
MemOpKind CopyKind(uint8_t k) {
  switch (k) {
    case 1:  // HTOD
    case 3:  // HTOA
      return MemOpKind::kHtoD;
    case 2:  // DTOH
    case 4:  // ATOH
      return MemOpKind::kDtoH;
    case 5:  // ATOA
    case 6:  // ATOD
    case 7:  // DTOA
    case 8:  // DTOD
      return MemOpKind::kDtoD;
    case 9:
      return MemOpKind::kHtoH;
    case 10:
      return MemOpKind::kPtoP;
    default:
      return MemOpKind::kOther;
  }
}

// CUpti_ActivityMemoryKind -> MemoryKind.
MemoryKind MemKind(uint32_t k) {
  switch (k) {
    case 1:
      return MemoryKind::kPageable;
    case 2:
      return MemoryKind::kPinned;
    case 3:
    case 6:  // device static
      return MemoryKind::kDevice;
    case 4:
      return MemoryKind::kArray;
    case 5:
    case 7:  // managed static
      return MemoryKind::kManaged;
    default:
      return MemoryKind::kUnknown;
  }
}

}  // namespace

void RecorderMapper::Visit(RecordType type, std::string_view body) {
  switch (type) {
    case RecordType::kString:
      return MapString(body);
    case RecordType::kProcess:
      return MapProcess(body);
    case RecordType::kDevice:
      return MapDevice(body);
    case RecordType::kKernel:
      return MapKernel(body);
    case RecordType::kGraph:
      return MapGraph(body);
    case RecordType::kMemcpy:
      return MapMemcpy(body);
    case RecordType::kMemset:
      return MapMemset(body);
    case RecordType::kApi:
      return MapApiCall(body);
    case RecordType::kRange:
      return MapRange(body);
    case RecordType::kThread:
      return MapThread(body);
    case RecordType::kGpuMetric:
      return MapGpuMetric(body);
    case RecordType::kGpuMetricSample:
      return MapGpuMetricSample(body);
    case RecordType::kGpuMetricsStatus:
      return MapGpuMetricsStatus(body);
    case RecordType::kMemory:
      return MapMemory(body);
    case RecordType::kMemoryPool:
      return MapMemoryPool(body);
    case RecordType::kGraphNode:
      return MapGraphNode(body);
    case RecordType::kGraphEvent:
      return MapGraphEvent(body);
    case RecordType::kSync:
      ++sync_records_;
      return;
    case RecordType::kCaptureWindow:
      ++windows_;
      return;
    case RecordType::kDrops:
      drops_ = recfmt::DecodeBody<recfmt::DropsBody>(body);  // cumulative: the last one counts
      return;
    case RecordType::kEnd:
      end_ = recfmt::DecodeBody<recfmt::EndBody>(body);
      have_end_ = true;
      return;
  }
  ++unknown_types_;
}

void RecorderMapper::MapString(std::string_view body) {
  uint32_t id;
  std::string_view text;
  if (!recfmt::DecodeString(body, &id, &text)) {
    ++malformed_;
    return;
  }
  // The recorder numbers strings from 1 and never reaches 0xFFFFFFFF (its own table would wrap);
  // id 0 is the empty string. Either defined by a record is damage: counted, not taken.
  if (id == recfmt::kNoString || id == recfmt::kReservedStringId) {
    ++reserved_string_ids_;
    return;
  }
  PutString(id, text);
}

void RecorderMapper::MapProcess(std::string_view body) {
  const auto p = recfmt::DecodeBody<recfmt::ProcessBody>(body);
  pid_ = static_cast<int32_t>(p.pid);
  process_ = p;
  have_process_ = true;
  ProcessInfo info;
  info.pid = pid_;
  info.name = std::string(FileNameOf(Text(p.executable_string)));
  b_.AddProcess(info);
}

void RecorderMapper::MapDevice(std::string_view body) {
  const auto d = recfmt::DecodeBody<recfmt::DeviceBody>(body);
  DeviceInfo info;
  info.id = d.id;
  info.name = std::string(Text(d.name_string));
  info.sm_count = d.sm_count;
  info.cc_major = d.cc_major;
  info.cc_minor = d.cc_minor;
  info.total_memory_bytes = d.total_memory_bytes;
  info.max_threads_per_sm = d.max_threads_per_sm;
  info.max_blocks_per_sm = d.max_blocks_per_sm;
  info.registers_per_sm = d.registers_per_sm;
  info.shared_memory_per_sm_bytes = d.shared_memory_per_sm_bytes;
  info.shared_memory_per_block_optin_bytes = d.shared_memory_per_block_optin_bytes;
  info.l2_cache_bytes = d.l2_cache_bytes;
  info.clock_rate_hz = d.clock_rate_hz;
  info.memory_bandwidth_bytes_per_s = d.memory_bandwidth_bytes_per_s;
  b_.AddDevice(info);
}

void RecorderMapper::MapKernel(std::string_view body) {
  const auto k = recfmt::DecodeBody<recfmt::KernelBody>(body);
  KernelRow row;
  row.start_ns = k.start_ns;
  row.end_ns = k.end_ns;
  row.device = static_cast<int32_t>(k.device);
  row.stream = static_cast<int32_t>(k.stream);
  row.pid = pid_;
  row.name = Id(k.name_string, "<unnamed kernel>");
  row.correlation = k.correlation;
  row.grid = {k.grid_x, k.grid_y, k.grid_z};
  row.block = {k.block_x, k.block_y, k.block_z};
  row.registers_per_thread = k.registers_per_thread;
  row.static_smem_bytes = k.static_smem_bytes;
  row.dynamic_smem_bytes = k.dynamic_smem_bytes;
  row.graph_node = static_cast<int64_t>(k.graph_node_id);
  busy_[k.device].push_back({k.start_ns, k.end_ns});
  if (k.graph_id != 0) node_traced_launches_.insert(k.correlation);
  if (row.graph_node != 0) {
    // Where its node was captured is known once every graph node record is read (they
    // may come after the kernels): added in Finish().
    graph_node_kernels_.push_back(row);
    return;
  }
  b_.AddKernel(row);
}

void RecorderMapper::MapGraph(std::string_view body) {
  // A whole graph's run is one row on its stream, named after the graph, so GPU time,
  // idle gaps and the link to cudaGraphLaunch stay right; its kernels were not recorded.
  const auto g = recfmt::DecodeBody<recfmt::GraphBody>(body);
  KernelRow row;
  row.start_ns = g.start_ns;
  row.end_ns = g.end_ns;
  row.device = static_cast<int32_t>(g.device);
  row.stream = static_cast<int32_t>(g.stream);
  row.pid = pid_;
  row.name = b_.Intern(WholeGraphName(g.graph_id));
  row.short_name = row.name;  // keep "(whole graph)" in tables
  row.correlation = g.correlation;
  b_.AddKernel(row);
  busy_[g.device].push_back({g.start_ns, g.end_ns});
  ++whole_graphs_;
  whole_graph_launches_.insert(g.correlation);
}

void RecorderMapper::MapMemcpy(std::string_view body) {
  const auto m = recfmt::DecodeBody<recfmt::MemcpyBody>(body);
  MemOpRow row;
  row.start_ns = m.start_ns;
  row.end_ns = m.end_ns;
  row.device = static_cast<int32_t>(m.device);
  row.stream = static_cast<int32_t>(m.stream);
  row.pid = pid_;
  row.kind = CopyKind(m.copy_kind);
  row.src_kind = MemKind(m.src_kind);
  row.dst_kind = MemKind(m.dst_kind);
  row.size_bytes = static_cast<int64_t>(m.bytes);
  row.correlation = m.correlation;
  b_.AddMemOp(row);
  busy_[m.device].push_back({m.start_ns, m.end_ns});
}

void RecorderMapper::MapMemset(std::string_view body) {
  const auto m = recfmt::DecodeBody<recfmt::MemsetBody>(body);
  MemOpRow row;
  row.start_ns = m.start_ns;
  row.end_ns = m.end_ns;
  row.device = static_cast<int32_t>(m.device);
  row.stream = static_cast<int32_t>(m.stream);
  row.pid = pid_;
  row.kind = MemOpKind::kMemset;
  row.dst_kind = MemKind(m.memory_kind);
  row.size_bytes = static_cast<int64_t>(m.bytes);
  row.correlation = m.correlation;
  b_.AddMemOp(row);
}

void RecorderMapper::MapApiCall(std::string_view body) {
  const auto a = recfmt::DecodeBody<recfmt::ApiBody>(body);
  ApiCallRow row;
  row.start_ns = a.start_ns;
  row.end_ns = a.end_ns;
  row.pid = static_cast<int32_t>(a.pid);
  row.tid = static_cast<int32_t>(a.tid);
  row.name = Text(a.name_string);
  if (row.name.empty()) row.name = "<unknown API call>";
  row.kind = a.domain == static_cast<uint32_t>(recfmt::ApiDomain::kDriver) ? ApiKind::kDriver
                                                                           : ApiKind::kRuntime;
  row.correlation = a.correlation;
  b_.AddApiCall(row);
}

void RecorderMapper::MapRange(std::string_view body) {
  const auto r = recfmt::DecodeBody<recfmt::RangeBody>(body);
  RangeRow row;
  row.start_ns = r.start_ns;
  row.end_ns = r.end_ns;
  row.pid = static_cast<int32_t>(r.pid);
  row.tid = static_cast<int32_t>(r.tid);
  row.name = Id(r.name_string, "");
  row.domain = r.domain_string == recfmt::kNoString ? StringId{} : Id(r.domain_string, "");
  row.kind = r.kind == static_cast<uint32_t>(recfmt::RangeKind::kPushPop)
                 ? RangeKind::kNvtxPushPop
                 : RangeKind::kNvtxStartEnd;
  b_.AddRange(row);
}

void RecorderMapper::MapThread(std::string_view body) {
  const auto t = recfmt::DecodeBody<recfmt::ThreadBody>(body);
  ThreadInfo info;
  info.pid = static_cast<int32_t>(t.pid);
  info.tid = static_cast<int32_t>(t.tid);
  info.name = std::string(Text(t.name_string));
  b_.AddThread(info);
}

void RecorderMapper::MapGpuMetric(std::string_view body) {
  const auto m = recfmt::DecodeBody<recfmt::GpuMetricBody>(body);
  const std::string_view name = Text(m.name_string);
  if (name.empty()) {
    ++malformed_;
    return;
  }
  if (m.index == recfmt::kNotSampled) {
    not_sampled_.push_back(
        fmt::format("{} on device {} ({})", name, m.device, Text(m.reason_string)));
    return;
  }
  std::vector<StringId>& names = metric_names_[m.device];
  if (m.index >= kMaxMetricsPerDevice) {
    ++malformed_;
    return;
  }
  if (names.size() <= m.index) names.resize(m.index + 1);
  names[m.index] = Id(m.name_string, "");
}

void RecorderMapper::MapGpuMetricSample(std::string_view body) {
  recfmt::GpuMetricSampleHeader h{};
  const char* values = nullptr;
  if (!recfmt::DecodeGpuMetricSample(body, &h, &values) || !have_process_) {
    ++malformed_;
    return;
  }
  const auto it = metric_names_.find(h.device);
  if (it == metric_names_.end() || h.count > it->second.size()) {
    ++malformed_;
    return;
  }
  // PM sampling's timestamps follow the host's real-time clock; the other records are on
  // the CUPTI clock, whose offset from it the process record holds. Finish() then checks
  // the samples against the kernels (gpu_metrics_align.h).
  const DurationNs to_cupti = process_.start_realtime_ns - process_.start_cupti_ns;
  PendingSample p;
  p.start_ns = h.start_ns - to_cupti;
  p.end_ns = h.end_ns - to_cupti;
  p.device = h.device;
  p.first = sample_values_.size();
  p.count = h.count;
  for (uint32_t i = 0; i < h.count; ++i) {
    double v;
    std::memcpy(&v, values + i * sizeof v, sizeof v);
    sample_values_.push_back(v);
  }
  samples_.push_back(p);
}

void RecorderMapper::MapGpuMetricsStatus(std::string_view body) {
  const auto st = recfmt::DecodeBody<recfmt::GpuMetricsStatusBody>(body);
  metrics_status_[st.device] = {st, std::string(Text(st.error_string))};
}

void RecorderMapper::MapMemory(std::string_view body) {
  const auto m = recfmt::DecodeBody<recfmt::MemoryBody>(body);
  const bool alloc = m.operation == static_cast<uint32_t>(recfmt::MemoryOperation::kAllocation);
  if ((!alloc && m.operation != static_cast<uint32_t>(recfmt::MemoryOperation::kRelease)) ||
      m.bytes > static_cast<uint64_t>(INT64_MAX)) {
    ++malformed_;
    return;
  }
  TraceBuilder::MemoryEventRow row;
  row.time_ns = m.time_ns;
  row.device = static_cast<int32_t>(m.device);
  row.pid = static_cast<int32_t>(m.pid);
  row.bytes = alloc ? static_cast<int64_t>(m.bytes) : -static_cast<int64_t>(m.bytes);
  row.address = m.address;
  row.kind = MemKind(m.memory_kind);
  row.correlation = m.correlation;
  if (m.name_string != recfmt::kNoString) row.name = Id(m.name_string, "");
  if (m.source_string != recfmt::kNoString) row.source = Id(m.source_string, "");
  if (m.pool_type != static_cast<uint32_t>(recfmt::MemoryPoolType::kNone)) {
    row.pool = m.pool_address;
    if (m.pool_type == static_cast<uint32_t>(recfmt::MemoryPoolType::kLocal) &&
        m.pool_size <= static_cast<uint64_t>(INT64_MAX)) {
      row.pool_size = static_cast<int64_t>(m.pool_size);
    }
  }
  b_.AddMemoryEvent(row);
}

void RecorderMapper::MapMemoryPool(std::string_view body) {
  const auto p = recfmt::DecodeBody<recfmt::MemoryPoolBody>(body);
  if (p.operation < 1 || p.operation > 3 || p.size > static_cast<uint64_t>(INT64_MAX)) {
    ++malformed_;
    return;
  }
  TraceBuilder::MemoryEventRow row;  // a pool's new size only: no allocation
  row.time_ns = p.time_ns;
  row.device = static_cast<int32_t>(p.device);
  row.pid = static_cast<int32_t>(p.pid);
  row.kind = MemoryKind::kDevice;
  row.correlation = p.correlation;
  row.pool = p.address;
  // A new pool holds no memory yet: CUPTI reports 32 MiB at creation on the H200, but the
  // first 64 MiB allocation brings it to 64 MiB, not 96 (docs/analyses/memory.md).
  if (p.operation != static_cast<uint32_t>(recfmt::MemoryPoolOperation::kTrimmed)) {
    row.pool_size = 0;
  } else if (p.pool_type == static_cast<uint32_t>(recfmt::MemoryPoolType::kLocal)) {
    row.pool_size = static_cast<int64_t>(p.size);
  }
  if (p.managed != 0) row.kind = MemoryKind::kManaged;
  b_.AddMemoryEvent(row);
  ++pool_records_;
}

void RecorderMapper::MapGraphNode(std::string_view body) {
  const auto n = recfmt::DecodeBody<recfmt::GraphNodeBody>(body);
  if (n.node_id == 0) {
    ++malformed_;
    return;
  }
  if (n.event != static_cast<uint32_t>(recfmt::GraphNodeEvent::kCreated) &&
      n.event != static_cast<uint32_t>(recfmt::GraphNodeEvent::kCloned)) {
    ++unknown_types_;  // an event a later writer added
    return;
  }
  // Ids and threads are cast as the kernels' and the API calls' and ranges' are, so that
  // they compare equal; a thread id past int32 reads as unknown (negative).
  graph_nodes_.Add(static_cast<int64_t>(n.node_id), n.time_ns, static_cast<int32_t>(n.pid),
                   static_cast<int32_t>(n.tid), static_cast<int64_t>(n.original_node_id));
}

void RecorderMapper::MapGraphEvent(std::string_view body) {
  const auto e = recfmt::DecodeBody<recfmt::GraphEventBody>(body);
  switch (e.event) {
    case static_cast<uint32_t>(recfmt::GraphEvent::kCreated):
      if (e.graph_id == 0) break;
      graphs_created_.push_back(e);
      return;
    case static_cast<uint32_t>(recfmt::GraphEvent::kCloned):
      if (e.graph_id == 0) break;
      graphs_derived_.push_back(e);
      graphs_derived_.back().graph_exec_id = 0;
      return;
    case static_cast<uint32_t>(recfmt::GraphEvent::kExecCreated):
      if (e.graph_id == 0 || e.graph_exec_id == 0) break;
      graphs_derived_.push_back(e);
      return;
    default:
      ++unknown_types_;  // an event a later writer added
      return;
  }
  ++malformed_;  // a creation, clone or instantiation without its ids
}

void RecorderMapper::PutString(uint32_t id, std::string_view text) {
  const FileString entry{text, b_.Intern(text)};
  const size_t dense_limit = 2 * (strings_seen_ + 1) + 4096;
  ++strings_seen_;
  if (id < strings_.size()) {
    strings_[id] = entry;
  } else if (id < dense_limit) {
    strings_.resize(static_cast<size_t>(id) + 1);
    strings_[id] = entry;
  } else {
    sparse_strings_[id] = entry;
  }
}

const RecorderMapper::FileString* RecorderMapper::FindString(uint32_t id) const {
  if (id < strings_.size()) return &strings_[id];
  const auto it = sparse_strings_.find(id);
  return it == sparse_strings_.end() ? nullptr : &it->second;
}

std::string_view RecorderMapper::Text(uint32_t id) const {
  const FileString* s = FindString(id);
  return s != nullptr ? s->text : std::string_view();
}

StringId RecorderMapper::Id(uint32_t id, std::string_view fallback) {
  if (id != recfmt::kNoString) {
    const FileString* s = FindString(id);
    if (s != nullptr && !s->text.empty()) return s->id;
    ++missing_strings_;
  }
  return b_.Intern(fallback);
}

}  // namespace sightline
