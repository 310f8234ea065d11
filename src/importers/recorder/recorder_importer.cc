#include "importers/recorder/recorder_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/file_io.h"
#include "base/input_data.h"
#include "importers/recorder/gpu_metrics_align.h"
#include "model/graph_nodes.h"
#include "model/trace_builder.h"
#include "sightline/recorder_format.h"

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

class RecorderMapper {
 public:
  explicit RecorderMapper(TraceBuilder& b) : b_(b) {}

  void Visit(RecordType type, std::string_view body) {
    switch (type) {
      case RecordType::kString: {
        uint32_t id;
        std::string_view text;
        if (!recfmt::DecodeString(body, &id, &text)) {
          ++malformed_;
          return;
        }
        PutString(id, text);
        return;
      }
      case RecordType::kProcess: {
        const auto p = recfmt::DecodeBody<recfmt::ProcessBody>(body);
        pid_ = static_cast<int32_t>(p.pid);
        process_ = p;
        have_process_ = true;
        ProcessInfo info;
        info.pid = pid_;
        info.name = std::string(FileNameOf(Text(p.executable_string)));
        b_.AddProcess(info);
        return;
      }
      case RecordType::kDevice: {
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
        return;
      }
      case RecordType::kKernel: {
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
        return;
      }
      case RecordType::kGraph: {
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
        return;
      }
      case RecordType::kMemcpy: {
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
        return;
      }
      case RecordType::kMemset: {
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
        return;
      }
      case RecordType::kApi: {
        const auto a = recfmt::DecodeBody<recfmt::ApiBody>(body);
        ApiCallRow row;
        row.start_ns = a.start_ns;
        row.end_ns = a.end_ns;
        row.pid = static_cast<int32_t>(a.pid);
        row.tid = static_cast<int32_t>(a.tid);
        row.name = Text(a.name_string);
        if (row.name.empty()) row.name = "<unknown API call>";
        row.kind = a.domain == static_cast<uint32_t>(recfmt::ApiDomain::kDriver)
                       ? ApiKind::kDriver
                       : ApiKind::kRuntime;
        row.correlation = a.correlation;
        b_.AddApiCall(row);
        return;
      }
      case RecordType::kRange: {
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
        return;
      }
      case RecordType::kThread: {
        const auto t = recfmt::DecodeBody<recfmt::ThreadBody>(body);
        ThreadInfo info;
        info.pid = static_cast<int32_t>(t.pid);
        info.tid = static_cast<int32_t>(t.tid);
        info.name = std::string(Text(t.name_string));
        b_.AddThread(info);
        return;
      }
      case RecordType::kGpuMetric: {
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
        return;
      }
      case RecordType::kGpuMetricSample: {
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
        return;
      }
      case RecordType::kGpuMetricsStatus: {
        const auto st = recfmt::DecodeBody<recfmt::GpuMetricsStatusBody>(body);
        metrics_status_[st.device] = {st, std::string(Text(st.error_string))};
        return;
      }
      case RecordType::kMemory: {
        const auto m = recfmt::DecodeBody<recfmt::MemoryBody>(body);
        const bool alloc =
            m.operation == static_cast<uint32_t>(recfmt::MemoryOperation::kAllocation);
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
        return;
      }
      case RecordType::kMemoryPool: {
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
        return;
      }
      case RecordType::kGraphNode: {
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
        return;
      }
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

  // GPU metric samples into the counters, per device shifted onto the kernels' clock when the
  // data pins the shift down.
  void AddMetricSamples() {
    Diagnostics& d = b_.diagnostics();
    std::map<uint32_t, DurationNs> shift;
    for (const auto& [device, names] : metric_names_) {
      const StringId gr_name = b_.Intern("GR Active [Throughput %]");
      const size_t gr =
          static_cast<size_t>(std::find(names.begin(), names.end(), gr_name) - names.begin());
      std::vector<MetricAlignSample> fit;
      for (const PendingSample& p : samples_) {
        if (p.device == device && gr < p.count) {
          fit.push_back({p.start_ns, p.end_ns, sample_values_[p.first + gr]});
        }
      }
      if (fit.empty()) continue;
      const MetricAlignment a = AlignMetricSamples(busy_[device], fit);
      if (a.checked) {
        shift[device] = a.shift_ns;
        d.Add(
            DiagCode::kRecorderGpuMetricsAligned, static_cast<int64_t>(fit.size()),
            fmt::format("device {}: best-fitting shift {:+.1f} us, applied {:+.1f} us ({} samples "
                        "at changes of GR Active; mismatch {:.4f} -> {:.4f})",
                        device, static_cast<double>(a.best_ns) / 1e3,
                        static_cast<double>(a.shift_ns) / 1e3, a.transitions, a.error_before,
                        a.error_after));
      } else {
        d.Add(DiagCode::kRecorderGpuMetricsNotAligned, static_cast<int64_t>(fit.size()),
              fmt::format("device {}: {} samples at changes of GR Active", device, a.transitions));
      }
    }
    for (const PendingSample& p : samples_) {
      const auto names = metric_names_.find(p.device);
      const auto sh = shift.find(p.device);
      const DurationNs by = sh == shift.end() ? 0 : sh->second;
      for (uint32_t i = 0; i < p.count; ++i) {
        if (names->second[i].value == 0) continue;  // an index no metric record named
        b_.AddCounter(p.start_ns + by, static_cast<int32_t>(p.device), names->second[i],
                      sample_values_[p.first + i]);
      }
    }
  }

  // Graph kernels with the capture of their node (model/graph_nodes.h), counting those whose
  // node has no creation record.
  void AddGraphNodeKernels() {
    int64_t without = 0;
    std::unordered_set<int64_t> missing_nodes;
    for (KernelRow& row : graph_node_kernels_) {
      if (!graph_nodes_.FillCapture(row)) {
        ++without;
        missing_nodes.insert(row.graph_node);
      }
      b_.AddKernel(row);
    }
    if (without > 0) {
      b_.diagnostics().Add(
          DiagCode::kGraphKernelsWithoutCapture, without,
          fmt::format("{} of {} graph kernels, {} distinct nodes; the file has {} node records{}",
                      without, graph_node_kernels_.size(), missing_nodes.size(),
                      graph_nodes_.size(),
                      drops_.graph_node_dropped_records > 0
                          ? fmt::format(", {} were dropped while recording",
                                        drops_.graph_node_dropped_records)
                          : std::string()));
    }
    graph_node_kernels_.clear();
  }

  void Finish(const std::string& path, const recfmt::ReadSummary& summary) {
    AddGraphNodeKernels();
    AddMetricSamples();
    TraceSource& src = b_.source();
    src.path = path;
    src.format = "sightline-recorder";
    src.format_version = std::to_string(summary.version);
    src.producer = "sightline record (CUPTI)";
    if (have_process_) {
      src.rank = process_.rank;
      src.world_size = process_.world_size;
      // The host a rank ran on: ranks of one host share a clock (analyses/ranks/ranks.h).
      src.host = std::string(Text(process_.hostname_string));
      src.producer =
          fmt::format("sightline record (CUPTI API {}), capture range {}", process_.cupti_version,
                      process_.capture_range == 1 ? "cudaProfilerApi" : "none");
      if (process_.capture_range == 1) src.producer += fmt::format(", {} window(s)", windows_);
    }
    Diagnostics& d = b_.diagnostics();
    const int64_t dropped =
        static_cast<int64_t>(drops_.cupti_dropped_records + drops_.queue_dropped_records);
    if (dropped > 0) {
      d.Add(DiagCode::kRecorderDroppedRecords, dropped,
            fmt::format("{} CUPTI had no buffer for, {} the writer could not keep up with",
                        drops_.cupti_dropped_records, drops_.queue_dropped_records));
    }
    if (summary.bad_chunks > 0) {
      d.Add(DiagCode::kRecorderTruncatedChunks, static_cast<int64_t>(summary.bad_chunks),
            fmt::format("{} bytes not read", summary.unread_bytes));
    } else if (!have_end_) {
      d.Add(DiagCode::kRecorderNotFinished);
    }
    if (summary.malformed_records + malformed_ > 0) {
      d.Add(DiagCode::kRecorderMalformedRecords,
            static_cast<int64_t>(summary.malformed_records + malformed_));
    }
    if (drops_.unpaired_ranges > 0) {
      d.Add(DiagCode::kRecorderUnpairedRanges, static_cast<int64_t>(drops_.unpaired_ranges));
    }
    if (drops_.unknown_records + unknown_types_ > 0) {
      d.Add(DiagCode::kRecorderUnknownRecords,
            static_cast<int64_t>(drops_.unknown_records + unknown_types_));
    }
    if (missing_strings_ > 0) d.Add(DiagCode::kRecorderMissingStrings, missing_strings_);
    NoteWholeGraphRuns(d, whole_graphs_);
    if (process_.graph_trace_sample > 0) {
      // Which replays were traced node by node is told by the records themselves: a launch whose
      // kernels are in the file (graph id set) was; one with a whole-graph record was not.
      d.Add(DiagCode::kRecorderSampledGraphTrace,
            static_cast<int64_t>(node_traced_launches_.size()),
            fmt::format("sampled:{}: {} graph launches traced node by node, {} as whole graphs",
                        process_.graph_trace_sample, node_traced_launches_.size(),
                        whole_graph_launches_.size()));
    }
    if (sync_records_ > 0) d.Add(DiagCode::kRecorderSyncRecords, sync_records_);
    for (const std::string& m : not_sampled_) d.Add(DiagCode::kRecorderGpuMetricsNotSampled, 1, m);
    for (const auto& [device, status] : metrics_status_) {
      const recfmt::GpuMetricsStatusBody& st = status.first;
      if (!status.second.empty()) {
        d.Add(DiagCode::kRecorderGpuMetricsFailed, 1,
              fmt::format("device {}: {}", device, status.second));
      }
      if (st.overflows + st.failed_samples > 0) {
        d.Add(DiagCode::kRecorderGpuMetricsLost,
              static_cast<int64_t>(st.overflows + st.failed_samples),
              fmt::format("device {}: {} hardware buffer overflow(s), {} sample(s) not evaluated",
                          device, st.overflows, st.failed_samples));
      }
    }
  }

 private:
  // The writer numbers strings 1, 2, 3, ...: those ids index a dense table. An id far beyond the
  // strings seen so far (a damaged or hostile file) goes to a map, so that no id sizes memory.
  struct FileString {
    std::string_view text;
    StringId id;
  };
  void PutString(uint32_t id, std::string_view text) {
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
  const FileString* FindString(uint32_t id) const {
    if (id < strings_.size()) return &strings_[id];
    const auto it = sparse_strings_.find(id);
    return it == sparse_strings_.end() ? nullptr : &it->second;
  }
  std::string_view Text(uint32_t id) const {
    const FileString* s = FindString(id);
    return s != nullptr ? s->text : std::string_view();
  }
  StringId Id(uint32_t id, std::string_view fallback) {
    if (id != recfmt::kNoString) {
      const FileString* s = FindString(id);
      if (s != nullptr && !s->text.empty()) return s->id;
      ++missing_strings_;
    }
    return b_.Intern(fallback);
  }

  TraceBuilder& b_;
  std::vector<FileString> strings_;  // by file string id; texts are views into the file's bytes
  std::unordered_map<uint32_t, FileString> sparse_strings_;
  size_t strings_seen_ = 0;
  int32_t pid_ = -1;
  recfmt::ProcessBody process_{};
  bool have_process_ = false;
  recfmt::DropsBody drops_{};
  recfmt::EndBody end_{};
  bool have_end_ = false;
  int64_t sync_records_ = 0, windows_ = 0, missing_strings_ = 0;
  uint64_t malformed_ = 0, unknown_types_ = 0;
  int64_t whole_graphs_ = 0;
  // Correlation ids of graph launches traced node by node (their kernels carry a graph id) and as
  // whole graphs.
  std::unordered_set<uint32_t> node_traced_launches_, whole_graph_launches_;
  int64_t pool_records_ = 0;
  // Graph kernels wait for the node records (which may follow them) to learn their capture.
  GraphNodeIndex graph_nodes_;
  std::vector<KernelRow> graph_node_kernels_;
  // GPU metrics: per device, the sampled metrics by index; what was not sampled; the last status.
  static constexpr uint32_t kMaxMetricsPerDevice = 4096;
  std::map<uint32_t, std::vector<StringId>> metric_names_;
  std::vector<std::string> not_sampled_;
  struct PendingSample {
    TimeNs start_ns = 0, end_ns = 0;
    uint32_t device = 0, count = 0;
    size_t first = 0;  // in sample_values_
  };
  std::vector<PendingSample> samples_;
  std::vector<double> sample_values_;
  std::map<uint32_t, std::vector<std::pair<TimeNs, TimeNs>>> busy_;  // kernels, copies by device
  std::map<uint32_t, std::pair<recfmt::GpuMetricsStatusBody, std::string>> metrics_status_;
};

}  // namespace

bool SniffRecorderFile(std::string_view first_bytes) { return recfmt::HasFileMagic(first_bytes); }

StatusOr<Trace> ImportRecorderBytes(std::string_view bytes, const std::string& path) {
  TraceBuilder builder;
  RecorderMapper mapper(builder);
  recfmt::ReadSummary summary;
  const std::string error = recfmt::ReadRecords(
      bytes, &summary, [&](RecordType type, std::string_view body) { mapper.Visit(type, body); });
  if (!error.empty()) {
    return InvalidInputError(fmt::format(
        "{}: {}. Recordings come from `sightline record`; re-record if the file was damaged.", path,
        error));
  }
  mapper.Finish(path, summary);
  return builder.Finish();
}

StatusOr<Trace> ImportRecorderFile(const std::string& path, const ImportOptions&) {
  ASSIGN_OR_RETURN(std::string bytes, ReadInput(path));
  return ImportRecorderBytes(bytes, path);
}

}  // namespace sightline
