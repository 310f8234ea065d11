#include "importers/kineto/kineto_mapper.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "importers/kineto/kineto_names.h"
#include "importers/kineto/kineto_shapes.h"

namespace sightline::kineto {
namespace {

constexpr int64_t kUnset = EventArgs::kUnset;
constexpr std::string_view kNoCategory = "(no cat)";

bool FitsInt32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

int32_t ArgOr(int64_t v, int32_t fallback) {
  return v != kUnset && FitsInt32(v) ? static_cast<int32_t>(v) : fallback;
}

// The diagnostic for events of an unmapped category: one catalogue code per category Sightline
// knows to skip (the message says why); kKinetoUnmappedCategory for any other.
DiagCode UnmappedCode(std::string_view cat) {
  struct Entry {
    std::string_view cat;
    DiagCode code;
  };
  static constexpr Entry kCodes[] = {
      {"gpu_user_annotation", DiagCode::kKinetoUnmappedGpuUserAnnotation},
      {"gpu_user_Annotation", DiagCode::kKinetoUnmappedGpuUserAnnotation},  // PyTorch 1.10-1.12
      {"User", DiagCode::kKinetoUnmappedGpuUserAnnotation},                 // PyTorch 1.9
      {"ac2g", DiagCode::kKinetoUnmappedAc2g},
      {"async_cpu_to_gpu", DiagCode::kKinetoUnmappedAsyncCpuToGpu},
      {"async_gpu", DiagCode::kKinetoUnmappedAsyncCpuToGpu},  // PyTorch 1.10-1.12 flows
      {"async", DiagCode::kKinetoUnmappedAsyncCpuToGpu},      // PyTorch 1.8-1.9 flows
      {"fwdbwd", DiagCode::kKinetoUnmappedFwdbwd},
      {"Trace", DiagCode::kKinetoUnmappedTrace},
      {"overhead", DiagCode::kKinetoUnmappedOverhead},
      {"cpu_instant_event", DiagCode::kKinetoUnmappedCpuInstantEvent},
      {"cuda_sync", DiagCode::kKinetoUnmappedCudaSync},
      {kNoCategory, DiagCode::kKinetoUnmappedNoCategory},
  };
  for (const Entry& e : kCodes) {
    if (e.cat == cat) return e.code;
  }
  return DiagCode::kKinetoUnmappedCategory;
}

// "rank 3", "Rank: 3", "rank3" anywhere in a label; -1 when absent.
int32_t RankInLabel(std::string_view label) {
  for (size_t i = 0; i + 4 <= label.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(label[i])) != 'r' ||
        std::tolower(static_cast<unsigned char>(label[i + 1])) != 'a' ||
        std::tolower(static_cast<unsigned char>(label[i + 2])) != 'n' ||
        std::tolower(static_cast<unsigned char>(label[i + 3])) != 'k') {
      continue;
    }
    size_t j = i + 4;
    while (j < label.size() && (label[j] == ' ' || label[j] == ':' || label[j] == '=')) ++j;
    int64_t rank = -1;
    while (j < label.size() && std::isdigit(static_cast<unsigned char>(label[j]))) {
      rank = (rank < 0 ? 0 : rank) * 10 + (label[j] - '0');
      if (rank > INT32_MAX) return -1;
      ++j;
    }
    if (rank >= 0) return static_cast<int32_t>(rank);
  }
  return -1;
}

}  // namespace

void EventMapper::Map(const Event& e) {
  if (e.not_object) return Invalid();
  if (e.ph == 'M') {
    MapMetadata(e);
    return;
  }
  if ((e.ph == 'i' || e.ph == 'I') && e.category == Category::kOther &&
      e.cat == "cpu_instant_event" && e.has_name && e.name == "[memory]") {
    MapMemoryEvent(e);
    return;
  }
  const bool mapped_category = e.category != Category::kMissing && e.category != Category::kOther;
  if (e.ph != 'X' || !mapped_category) {
    if (mapped_category && e.ph == 0) {
      Invalid();  // e.g. a kernel without ph
      return;
    }
    CountUnmapped(e);
    return;
  }
  switch (e.category) {
    case Category::kKernel:
      return MapKernel(e);
    case Category::kGpuMemcpy:
      return MapMemOp(e, /*is_memset=*/false);
    case Category::kGpuMemset:
      return MapMemOp(e, /*is_memset=*/true);
    case Category::kCudaRuntime:
      return MapApiCall(e, ApiKind::kRuntime);
    case Category::kCudaDriver:
      return MapApiCall(e, ApiKind::kDriver);
    case Category::kCpuOp:
      return MapRange(e, RangeKind::kCpuOp);
    case Category::kUserAnnotation:
      return MapRange(e, RangeKind::kUserAnnotation);
    case Category::kPythonFunction:
      return MapRange(e, RangeKind::kPythonFunction);
    case Category::kMissing:
    case Category::kOther:
      break;
  }
}

bool EventMapper::GetTimes(const Event& e, Times* t) {
  if (!e.has_ts || !e.has_dur || !e.has_name || e.bad_value) return false;
  if (__builtin_add_overflow(e.ts_ns, offset_ns_, &t->start)) return false;
  if (__builtin_add_overflow(t->start, e.dur_ns, &t->end)) return false;
  return true;
}

int32_t EventMapper::SyntheticId(std::string_view text, bool is_pid) {
  auto& ids = is_pid ? synthetic_pids_ : synthetic_tids_;
  auto it = ids.find(text);
  if (it != ids.end()) return it->second;
  // Negative ids below -1 (-1 means unknown) keep string-named rows apart from real ones.
  const int32_t id = -2 - static_cast<int32_t>(ids.size());
  ids.emplace(std::string(text), id);
  return id;
}

bool EventMapper::GetHostIds(const Event& e, int32_t* pid, int32_t* tid) {
  auto resolve = [&](const EventId& id, bool is_pid, int32_t* out) {
    switch (id.kind) {
      case EventId::kInt:
        if (!FitsInt32(id.value)) return false;
        *out = static_cast<int32_t>(id.value);
        return true;
      case EventId::kString:
        *out = SyntheticId(id.text, is_pid);
        return true;
      case EventId::kMissing:
      case EventId::kInvalid:
        return false;
    }
    return false;
  };
  if (!resolve(e.pid, true, pid) || !resolve(e.tid, false, tid)) return false;
  if (e.pid.kind == EventId::kString) process_names_.try_emplace(*pid, e.pid.text);
  if (e.tid.kind == EventId::kString) thread_names_.try_emplace({*pid, *tid}, e.tid.text);
  return true;
}

bool EventMapper::GetGpuIds(const Event& e, int32_t* device, int32_t* stream) {
  // Kineto puts the device in pid and the stream in tid as well as in args.
  const bool from_args = e.args.device != kUnset && e.args.stream != kUnset;
  const int32_t pid = e.pid.kind == EventId::kInt && FitsInt32(e.pid.value)
                          ? static_cast<int32_t>(e.pid.value)
                          : -1;
  const int32_t tid = e.tid.kind == EventId::kInt && FitsInt32(e.tid.value)
                          ? static_cast<int32_t>(e.tid.value)
                          : -1;
  *device = ArgOr(e.args.device, pid);
  *stream = ArgOr(e.args.stream, tid);
  if (*device < 0 || *stream < 0) return false;
  if (!from_args) ++gpu_args_missing_;
  if (pid >= 0 && std::find(gpu_pids_.begin(), gpu_pids_.end(), pid) == gpu_pids_.end()) {
    gpu_pids_.push_back(pid);
  }
  return true;
}

bool EventMapper::GpuIdsOutOfRange(const Event& e) {
  const EventArgs& a = e.args;
  const bool bad = a.device_bad || a.stream_bad || (a.device != kUnset && !FitsInt32(a.device)) ||
                   (a.stream != kUnset && !FitsInt32(a.stream));
  if (bad) ++gpu_id_out_of_range_;
  return bad;
}

void EventMapper::MapKernel(const Event& e) {
  Times t;
  KernelRow row;
  if (GpuIdsOutOfRange(e)) return;
  if (!GetTimes(e, &t) || !GetGpuIds(e, &row.device, &row.stream)) return Invalid();
  row.start_ns = t.start;
  row.end_ns = t.end;
  row.pid = -1;  // the builder takes the launching process from the correlated API call
  row.name = builder_->Intern(e.name);
  row.correlation = e.args.correlation != kUnset ? e.args.correlation : -1;
  if (e.args.has_grid) row.grid = e.args.grid;
  if (e.args.has_block) row.block = e.args.block;
  row.registers_per_thread = ArgOr(e.args.registers_per_thread, -1);
  const int64_t smem = e.args.shared_memory;
  if (smem == 0) {
    row.static_smem_bytes = row.dynamic_smem_bytes = 0;
  } else if (smem != kUnset) {
    ++smem_split_unknown_;  // static + dynamic with an unknown split: both stay -1
  }
  builder_->AddKernel(row);
}

void EventMapper::MapMemOp(const Event& e, bool is_memset) {
  Times t;
  MemOpRow row;
  if (GpuIdsOutOfRange(e)) return;
  if (!GetTimes(e, &t) || !GetGpuIds(e, &row.device, &row.stream)) return Invalid();
  row.start_ns = t.start;
  row.end_ns = t.end;
  row.pid = -1;
  MemOpName parsed;
  const bool ok = is_memset ? ParseMemsetName(e.name, &parsed) : ParseMemcpyName(e.name, &parsed);
  if (!ok) ++memop_name_unknown_;
  row.kind = parsed.kind;
  row.src_kind = parsed.src;
  row.dst_kind = parsed.dst;
  if (e.args.bytes != kUnset && e.args.bytes >= 0) {
    row.size_bytes = e.args.bytes;
  } else {
    ++gpu_args_missing_;
  }
  row.correlation = e.args.correlation != kUnset ? e.args.correlation : -1;
  builder_->AddMemOp(row);
}

void EventMapper::MapApiCall(const Event& e, ApiKind kind) {
  Times t;
  ApiCallRow row;
  if (!GetTimes(e, &t) || !GetHostIds(e, &row.pid, &row.tid)) return Invalid();
  row.start_ns = t.start;
  row.end_ns = t.end;
  row.name = e.name;
  row.kind = kind;
  row.correlation = e.args.correlation != kUnset ? e.args.correlation : -1;
  builder_->AddApiCall(row);
}

void EventMapper::MapRange(const Event& e, RangeKind kind) {
  Times t;
  RangeRow row;
  if (!GetTimes(e, &t) || !GetHostIds(e, &row.pid, &row.tid)) return Invalid();
  row.start_ns = t.start;
  row.end_ns = t.end;
  row.name = builder_->Intern(e.name);
  row.kind = kind;
  if (kind == RangeKind::kCpuOp && (e.args.shapes_bad || !e.args.input_dims.empty())) {
    const ShapesRead read = e.args.shapes_bad
                                ? ShapesRead::kUnreadable
                                : CompactShapes(e.args.input_dims, e.args.input_types, &shapes_);
    if (read == ShapesRead::kKept) row.shapes = builder_->Intern(shapes_);
    shapes_unreadable_ += read == ShapesRead::kUnreadable;
  }
  builder_->AddRange(row);
  if (kind == RangeKind::kCpuOp && e.args.seq != kUnset && e.args.has_pg_name &&
      e.name == "record_param_comms") {
    builder_->AddCollective(
        t.start, t.end, row.pid, row.tid, builder_->Intern(e.args.pg_name),
        builder_->Intern(e.args.has_collective_name ? e.args.collective_name : std::string_view()),
        e.args.seq);
  }
}

void EventMapper::MapMetadata(const Event& e) {
  const std::string_view what = e.has_name ? e.name : std::string_view();
  const bool process_name = what == "process_name", process_labels = what == "process_labels";
  const bool thread_name = what == "thread_name";
  if (!process_name && !process_labels && !thread_name) {
    ++ignored_metadata_;  // sort indices and other display-only metadata
    return;
  }
  if (e.pid.kind == EventId::kString) {
    ++ignored_metadata_;  // Kineto's own rows ("Spans", "Traces")
    return;
  }
  if (e.pid.kind != EventId::kInt || !FitsInt32(e.pid.value)) return Invalid();
  const int32_t pid = static_cast<int32_t>(e.pid.value);
  if (process_labels) {
    if (!e.args.has_labels) return Invalid();
    process_labels_[pid] = std::string(e.args.labels);
    if (rank_from_labels_ < 0) rank_from_labels_ = RankInLabel(e.args.labels);
    return;
  }
  if (!e.args.has_name) return Invalid();
  if (process_name) {
    process_names_[pid] = std::string(e.args.name);
    return;
  }
  int32_t tid;
  if (e.tid.kind == EventId::kInt && FitsInt32(e.tid.value)) {
    tid = static_cast<int32_t>(e.tid.value);
  } else if (e.tid.kind == EventId::kString) {
    tid = SyntheticId(e.tid.text, /*is_pid=*/false);
  } else {
    return Invalid();
  }
  thread_names_[{pid, tid}] = std::string(e.args.name);
}

void EventMapper::MapMemoryEvent(const Event& e) {
  const EventArgs& a = e.args;
  constexpr int64_t kCpu = 0, kCuda = 1;
  if (a.device_type == kCpu) {
    ++host_memory_events_;
    return;
  }
  int32_t pid = -1, tid = -1;
  TimeNs time_ns = 0;
  if (!e.has_ts || e.bad_value || a.mem_bytes == kUnset || a.device_type != kCuda ||
      a.device_id == kUnset || !FitsInt32(a.device_id) || a.device_id < 0 ||
      __builtin_add_overflow(e.ts_ns, offset_ns_, &time_ns)) {
    ++memory_unusable_;
    return;
  }
  if (!GetHostIds(e, &pid, &tid)) pid = tid = -1;  // unknown: the event still counts
  TraceBuilder::MemoryEventRow row;
  row.time_ns = time_ns;
  row.device = static_cast<int32_t>(a.device_id);
  row.pid = pid;
  row.tid = tid;
  row.bytes = a.mem_bytes;
  row.address = a.addr == kUnset ? 0 : static_cast<uint64_t>(a.addr);
  row.kind = MemoryKind::kDevice;
  row.total_allocated = a.total_allocated == kUnset ? -1 : a.total_allocated;
  row.total_reserved = a.total_reserved == kUnset ? -1 : a.total_reserved;
  builder_->AddMemoryEvent(row);
}

void EventMapper::CountUnmapped(const Event& e) {
  // A mapped category in another phase (e.g. an instant "kernel" event) is counted apart.
  const bool other_phase = e.category != Category::kMissing && e.category != Category::kOther;
  const std::string_view key = e.category == Category::kMissing ? kNoCategory : e.cat;
  for (auto& u : unmapped_) {
    if (u.cat == key && u.phase == (other_phase ? e.ph : 0)) {
      ++u.count;
      return;
    }
  }
  unmapped_.push_back({std::string(key), static_cast<char>(other_phase ? e.ph : 0), 1});
}

void EventMapper::Finish() {
  auto is_gpu_pid = [&](int32_t pid) {
    if (std::find(gpu_pids_.begin(), gpu_pids_.end(), pid) != gpu_pids_.end()) return true;
    auto it = process_labels_.find(pid);
    return it != process_labels_.end() && it->second.starts_with("GPU");
  };
  for (const auto& [pid, name] : process_names_) {
    if (is_gpu_pid(pid)) continue;  // a device row: DeviceInfo describes it
    builder_->AddProcess(ProcessInfo{pid, name});
  }
  for (const auto& [key, name] : thread_names_) {
    if (is_gpu_pid(key.first) && std::string_view(name).starts_with("stream")) continue;
    builder_->AddThread(ThreadInfo{key.first, key.second, name});
  }

  Diagnostics& d = builder_->diagnostics();
  d.Add(DiagCode::kKinetoInvalidEvent, invalid_);
  d.Add(DiagCode::kKinetoGpuArgsMissing, gpu_args_missing_);
  d.Add(DiagCode::kKinetoGpuIdOutOfRange, gpu_id_out_of_range_);
  d.Add(DiagCode::kKinetoSmemSplitUnknown, smem_split_unknown_);
  d.Add(DiagCode::kKinetoMemopNameUnknown, memop_name_unknown_);
  d.Add(DiagCode::kKinetoUnmappedMetadata, ignored_metadata_);
  d.Add(DiagCode::kKinetoHostMemoryEvent, host_memory_events_);
  d.Add(DiagCode::kKinetoMemoryEventUnusable, memory_unusable_);
  d.Add(DiagCode::kKinetoShapesUnreadable, shapes_unreadable_);
  std::sort(unmapped_.begin(), unmapped_.end(), [](const Unmapped& a, const Unmapped& b) {
    return a.cat != b.cat ? a.cat < b.cat : a.phase < b.phase;
  });
  for (const Unmapped& u : unmapped_) {
    if (u.phase != 0) {
      d.Add(DiagCode::kKinetoUnmappedPhase, u.count,
            fmt::format("category '{}', phase '{}'", u.cat, u.phase));
      continue;
    }
    const DiagCode code = UnmappedCode(u.cat);
    d.Add(code, u.count,
          code == DiagCode::kKinetoUnmappedCategory ? fmt::format("category '{}'", u.cat) : "");
  }
}

}  // namespace sightline::kineto
