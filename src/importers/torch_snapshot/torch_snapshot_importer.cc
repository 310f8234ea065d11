#include "importers/torch_snapshot/torch_snapshot_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "base/file_io.h"
#include "base/input_data.h"
#include "base/input_limits.h"
#include "base/strings.h"
#include "importers/torch_snapshot/memory_purpose.h"
#include "importers/torch_snapshot/snapshot_replay.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

using torch_snapshot::Block;
using torch_snapshot::Device;
using torch_snapshot::Entry;
using torch_snapshot::Replay;
using torch_snapshot::Segment;
using torch_snapshot::SegmentAt;

constexpr size_t kMaxFramesScanned = 512;  // a call site is near the top of a stack
// The parts of a call site are cut to this: a name reached through the memo a million times must
// not be copied whole each time.
constexpr size_t kMaxSitePart = 256;
std::string_view Cut(std::string_view s) { return s.substr(0, kMaxSitePart); }

Entry::Action ActionOf(std::string_view a) {
  if (a == "alloc") return Entry::kAlloc;
  if (a == "free_requested" || a == "free") return Entry::kFree;
  if (a == "free_completed") return Entry::kFreeCompleted;
  if (a == "segment_alloc" || a == "segment_map") return Entry::kSegmentAlloc;
  if (a == "segment_free" || a == "segment_unmap") return Entry::kSegmentFree;
  if (a == "oom") return Entry::kOom;
  if (a == "snapshot") return Entry::kFreeCompleted;  // a marker: nothing changes
  return Entry::kOther;
}

class Mapper {
 public:
  Mapper(const PickleDoc& doc, std::string_view path, uint64_t input_bytes)
      : doc_(doc), path_(path), budget_(uint64_t{64} * input_bytes + (uint64_t{1} << 20)) {}

  StatusOr<Trace> Run() {
    const PickleValue* segments = nullptr;
    const PickleValue* traces = nullptr;
    if (doc_.Dict(doc_.root) != nullptr) {
      segments = doc_.Get(doc_.root, "segments");
      traces = doc_.Get(doc_.root, "device_traces");
    } else if (doc_.List(doc_.root) != nullptr) {
      segments = &doc_.root;  // torch.cuda.memory_snapshot(): the segments alone
    }
    if (segments == nullptr && traces == nullptr) {
      return InvalidInputError(fmt::format(
          "{}: not a memory snapshot: a plain pickle without 'segments' or 'device_traces' (write "
          "one with torch.cuda.memory._dump_snapshot(path))",
          path_));
    }
    if (segments != nullptr) RETURN_IF_ERROR(ReadSegments(*segments));
    if (traces != nullptr) RETURN_IF_ERROR(ReadTraces(*traces));
    return Build();
  }

 private:
  Status CheckBudget() const {
    if (doc_.work <= budget_) return Status::Ok();
    return InvalidInputError(fmt::format(
        "{}: not a memory snapshot Sightline can read: its pickle refers to the same data far more "
        "often than a snapshot does (more than {} lookups)",
        path_, budget_));
  }

  static bool DeviceId(int64_t v, int32_t* out) {
    if (v < 0 || v > std::numeric_limits<int32_t>::max()) return false;
    *out = static_cast<int32_t>(v);
    return true;
  }

  // segment_pool_id: a tuple (or list) of two ints; (0, 0), or none, is the default pool.
  bool PrivatePool(const PickleValue& seg) const {
    const PickleValue* id = doc_.Get(seg, "segment_pool_id");
    const auto* parts = id != nullptr ? doc_.List(*id) : nullptr;
    if (parts == nullptr) return false;
    for (const PickleValue& p : *parts) {
      if (p.kind == PickleValue::Kind::kInt && p.i != 0) return true;
    }
    return false;
  }

  Status ReadSegments(const PickleValue& segments) {
    const auto* list = doc_.List(segments);
    if (list == nullptr) return Status::Ok();
    for (const PickleValue& seg : *list) {
      RETURN_IF_ERROR(CheckBudget());
      int64_t device = -1, total = 0, seg_address = 0;
      int32_t id = 0;
      if (!doc_.GetInt(seg, "device", &device) || !DeviceId(device, &id) ||
          !doc_.GetInt(seg, "total_size", &total) || total < 0) {
        ++unusable_segments_;
        continue;
      }
      Device& d = devices_[id];
      d.reserved_at_dump += total;
      const bool private_pool = PrivatePool(seg);
      if (doc_.GetInt(seg, "address", &seg_address)) {
        d.segments.push_back({static_cast<uint64_t>(seg_address), total, private_pool});
      }
      const PickleValue* blocks = doc_.Get(seg, "blocks");
      const auto* bl = blocks != nullptr ? doc_.List(*blocks) : nullptr;
      if (bl == nullptr) continue;
      for (const PickleValue& b : *bl) {
        RETURN_IF_ERROR(CheckBudget());
        std::string_view state;
        int64_t size = 0, address = 0;
        if (!doc_.GetStr(b, "state", &state) || state != "active_allocated") continue;
        if (!doc_.GetInt(b, "size", &size) || size < 0 || !doc_.GetInt(b, "address", &address)) {
          ++unusable_segments_;
          continue;
        }
        d.allocated_at_dump += size;
        const PickleValue* frames = doc_.Get(b, "frames");
        d.live_at_dump.push_back(
            {static_cast<uint64_t>(address), size, private_pool, frames ? *frames : PickleValue{}});
      }
    }
    return Status::Ok();
  }

  Status ReadTraces(const PickleValue& traces) {
    const auto* list = doc_.List(traces);
    if (list == nullptr) return Status::Ok();
    for (size_t dev = 0; dev < list->size() && dev <= static_cast<size_t>(INT32_MAX); ++dev) {
      const auto* events = doc_.List((*list)[dev]);
      if (events == nullptr || events->empty()) continue;
      Device& d = devices_[static_cast<int32_t>(dev)];
      for (const PickleValue& ev : *events) {
        RETURN_IF_ERROR(CheckBudget());
        std::string_view action;
        Entry e;
        int64_t addr = 0;
        if (!doc_.GetStr(ev, "action", &action)) {
          ++unusable_events_;
          continue;
        }
        e.action = ActionOf(action);
        if (e.action == Entry::kOther) {
          ++unusable_events_;
          unknown_actions_[std::string(action.substr(0, 64))]++;
          continue;
        }
        if (e.action == Entry::kOom) {
          ++ooms_;
          continue;
        }
        if (!doc_.GetInt(ev, "addr", &addr) || !doc_.GetInt(ev, "size", &e.size) || e.size < 0) {
          ++unusable_events_;
          continue;
        }
        e.address = static_cast<uint64_t>(addr);
        if (doc_.GetInt(ev, "time_us", &e.time_us)) {
          if (e.time_us < 0 || e.time_us > std::numeric_limits<int64_t>::max() / 1000) {
            ++unusable_events_;
            continue;
          }
        } else {
          e.time_us = -1;
          ++no_time_;
        }
        if (const PickleValue* f = doc_.Get(ev, "frames")) e.frames = *f;
        d.history.push_back(e);
      }
    }
    return Status::Ok();
  }

  StringId SiteId(TraceBuilder& b, const PickleValue& frames) {
    if (doc_.List(frames) == nullptr) return StringId{};
    std::string site = SnapshotCallSite(doc_, frames);
    return site.empty() ? StringId{} : b.Intern(site);
  }

  MemoryPurpose Purpose(const PickleValue& frames, PoolHint pool) {
    frames_.clear();
    if (const auto* list = doc_.List(frames)) {
      const size_t n = std::min(list->size(), kMaxFramesScanned);
      for (size_t k = 0; k < n; ++k) {
        StackFrame f;
        doc_.GetStr((*list)[k], "filename", &f.file);
        doc_.GetStr((*list)[k], "name", &f.name);
        frames_.push_back(f);
      }
    }
    return PurposeOfStack(frames_, pool);
  }

  // Rows for the state before the history (or, without one, the dump's private pools): each
  // private pool's segment (reserved rises; a totals-only anchor first), then each block the
  // history does not explain (allocated rises), all marked as predating the events and placed
  // at `time_ns`. `allocated` and `reserved` are the totals before the history; the rows start
  // from them less what follows, so that each row's change is its own.
  Status AddStateRows(TraceBuilder& b, int32_t id, const Device& d, TimeNs time_ns,
                      const std::vector<size_t>& pre_pools, const std::vector<size_t>& pre_blocks,
                      int64_t allocated, int64_t reserved) {
    if (pre_pools.empty() && pre_blocks.empty()) return Status::Ok();
    int64_t pools = 0, blocks = 0;
    for (size_t k : pre_pools) pools += d.segments[k].size;
    for (size_t k : pre_blocks) blocks += d.live_at_dump[k].size;
    TraceBuilder::MemoryEventRow row;
    row.device = id;
    row.kind = MemoryKind::kDevice;
    row.time_ns = time_ns;
    row.predates = true;
    int64_t a = std::max<int64_t>(allocated - blocks, 0);
    int64_t r = std::max<int64_t>(reserved - pools, 0);
    row.total_allocated = a;
    row.total_reserved = r;
    if (!pre_pools.empty()) b.AddMemoryEvent(row);  // the anchor: a segment row's change is known
    for (size_t k : pre_pools) {
      r += d.segments[k].size;
      row.total_reserved = r;
      row.purpose = MemoryPurpose::kCudaGraphPool;
      b.AddMemoryEvent(row);
    }
    for (size_t k : pre_blocks) {
      RETURN_IF_ERROR(CheckBudget());
      const Block& blk = d.live_at_dump[k];
      a += blk.size;
      row.bytes = blk.size;
      row.address = blk.address;
      row.total_allocated = a;
      row.name = SiteId(b, blk.frames);
      row.purpose = Purpose(blk.frames, blk.private_pool ? PoolHint::kPrivate : PoolHint::kDefault);
      b.AddMemoryEvent(row);
    }
    return Status::Ok();
  }

  StatusOr<Trace> Build() {
    TraceBuilder b;
    // Times from the earliest time_us on: absolute epoch microseconds would make every offset a
    // 19-digit number. Without time_us (older PyTorch) the order is all there is: 1 µs apart.
    int64_t t0 = std::numeric_limits<int64_t>::max();
    for (const auto& [id, d] : devices_) {
      for (const Entry& e : d.history) {
        if (e.time_us >= 0) t0 = std::min(t0, e.time_us);
      }
    }
    if (t0 == std::numeric_limits<int64_t>::max()) t0 = 0;
    for (auto& [id, d] : devices_) {
      std::sort(d.segments.begin(), d.segments.end(),
                [](const Segment& x, const Segment& y) { return x.address < y.address; });
      TraceBuilder::MemoryEventRow row;
      row.device = id;
      row.kind = MemoryKind::kDevice;
      if (d.history.empty()) {
        // No history (recording was off): the dump's live blocks, all at time 0.
        if (!d.live_at_dump.empty()) ++no_history_devices_;
        std::vector<size_t> pools;
        for (size_t k = 0; k < d.segments.size(); ++k) {
          if (d.segments[k].private_pool) pools.push_back(k);
        }
        RETURN_IF_ERROR(AddStateRows(b, id, d, 0, pools, {}, 0, d.reserved_at_dump));
        int64_t allocated = 0;  // the blocks below are all there is
        for (const Block& blk : d.live_at_dump) {
          allocated += blk.size;
          row.bytes = blk.size;
          row.address = blk.address;
          row.total_allocated = allocated;
          row.total_reserved = d.reserved_at_dump;
          row.name = SiteId(b, blk.frames);
          row.purpose =
              Purpose(blk.frames, blk.private_pool ? PoolHint::kPrivate : PoolHint::kDefault);
          b.AddMemoryEvent(row);
          RETURN_IF_ERROR(CheckBudget());
        }
        continue;
      }
      const Replay rep = torch_snapshot::ReplayHistory(d);
      // The totals before the history: the dump's, less the history's net change.
      int64_t allocated = d.allocated_at_dump - rep.net_alloc;
      int64_t reserved = d.reserved_at_dump - rep.net_reserved;
      if (allocated < 0 || reserved < 0) {
        ++inconsistent_devices_;
        allocated = std::max<int64_t>(allocated, 0);
        reserved = std::max<int64_t>(reserved, 0);
      }
      const Entry& first = d.history.front();
      RETURN_IF_ERROR(AddStateRows(b, id, d, first.time_us >= 0 ? (first.time_us - t0) * 1000 : 0,
                                   rep.pre_pools, rep.pre_blocks, allocated, reserved));
      // Each segment's purpose while it lives (a private pool's: the CUDA graph's), by address.
      std::map<uint64_t, std::pair<uint64_t, bool>> segments;  // start -> end, a graph's
      int64_t order = 0;
      for (size_t i = 0; i < d.history.size(); ++i) {
        RETURN_IF_ERROR(CheckBudget());
        const Entry& e = d.history[i];
        row = TraceBuilder::MemoryEventRow{};
        row.device = id;
        row.kind = MemoryKind::kDevice;
        row.time_ns = e.time_us >= 0 ? (e.time_us - t0) * 1000 : order * 1000;
        ++order;
        row.address = e.address;
        const int64_t size = rep.size[i];
        switch (e.action) {
          case Entry::kAlloc:
            allocated += size;
            row.bytes = size;
            row.name = SiteId(b, e.frames);
            row.purpose = Purpose(e.frames, rep.pool[i]);
            break;
          case Entry::kFree:
            allocated -= size;
            row.bytes = -size;
            break;
          case Entry::kSegmentAlloc: {
            reserved += size;
            // A segment lasting to the dump is in the pool the dump says; one freed before it
            // is a graph's when it was made during a capture.
            const bool graph =
                rep.pool[i] != PoolHint::kUnknown
                    ? rep.pool[i] == PoolHint::kPrivate
                    : Purpose(e.frames, PoolHint::kUnknown) == MemoryPurpose::kCudaGraphPool;
            segments[e.address] = {e.address + static_cast<uint64_t>(size), graph};
            if (graph) row.purpose = MemoryPurpose::kCudaGraphPool;
            row.bytes = 0;  // a totals-only row
            row.address = 0;
            break;
          }
          case Entry::kSegmentFree: {
            reserved -= size;
            auto it = segments.upper_bound(e.address);
            if (it != segments.begin() && std::prev(it)->second.first > e.address) {
              --it;
              if (it->second.second) row.purpose = MemoryPurpose::kCudaGraphPool;
              if (it->first == e.address) segments.erase(it);
            }  // else a segment from before the history: its pool is unknown, never counted
            row.bytes = 0;
            row.address = 0;
            break;
          }
          default:
            continue;  // free_completed, snapshot markers
        }
        row.total_allocated = std::max<int64_t>(allocated, 0);
        row.total_reserved = std::max<int64_t>(reserved, 0);
        b.AddMemoryEvent(row);
      }
    }
    Diagnostics& diag = b.diagnostics();
    std::string actions;
    for (const auto& [name, n] : unknown_actions_) {
      actions += fmt::format("{}{} x{}", actions.empty() ? "actions " : ", ", name, n);
    }
    diag.Add(DiagCode::kTorchSnapshotEntryUnusable, unusable_events_ + unusable_segments_, actions);
    diag.Add(DiagCode::kTorchSnapshotNoTime, no_time_);
    diag.Add(DiagCode::kTorchSnapshotNoHistory, no_history_devices_);
    diag.Add(DiagCode::kTorchSnapshotOom, ooms_);
    diag.Add(DiagCode::kTorchSnapshotTotalsInconsistent, inconsistent_devices_);
    Trace trace = b.Finish();
    trace.source.path = std::string(path_);
    trace.source.format = "torch-memory-snapshot";
    trace.source.producer = "PyTorch memory snapshot (torch.cuda.memory._dump_snapshot)";
    return trace;
  }

  const PickleDoc& doc_;
  std::string_view path_;
  uint64_t budget_;
  std::map<int32_t, Device> devices_;
  std::vector<StackFrame> frames_;  // reused by Purpose()
  int64_t unusable_events_ = 0, unusable_segments_ = 0, no_time_ = 0, ooms_ = 0;
  int64_t no_history_devices_ = 0, inconsistent_devices_ = 0;
  std::map<std::string, int64_t> unknown_actions_;
};

}  // namespace

std::string SnapshotCallSite(const PickleDoc& doc, const PickleValue& frames) {
  const auto* list = doc.List(frames);
  if (list == nullptr) return "";
  std::string op;
  std::string_view py_file, py_name, any_file, any_name;
  int64_t py_line = 0, any_line = 0;
  const size_t n = std::min(list->size(), kMaxFramesScanned);
  for (size_t k = 0; k < n; ++k) {
    const PickleValue& f = (*list)[k];
    std::string_view file, name;
    int64_t line = 0;
    doc.GetStr(f, "filename", &file);
    doc.GetStr(f, "name", &name);
    doc.GetInt(f, "line", &line);
    // The innermost aten op (at::_ops::mm::call), as the profiler's innermost op range would be.
    constexpr std::string_view kOps = "at::_ops::";
    if (op.empty() && name.substr(0, kOps.size()) == kOps) {
      const size_t end = name.find("::call(", kOps.size());
      if (end != std::string_view::npos) {
        op = "aten::" + std::string(Cut(name.substr(kOps.size(), end - kOps.size())));
      }
    }
    if (!EndsWith(file, ".py")) continue;
    if (any_file.empty()) {
      any_file = file;
      any_name = name;
      any_line = line;
    }
    // torch's own Python (torch/nn/functional.py, torch/_tensor.py) is not the caller's code.
    const bool torch_internal = IsTorchPythonFile(file);
    if (!torch_internal && py_file.empty()) {
      py_file = file;
      py_name = name;
      py_line = line;
      break;
    }
  }
  if (py_file.empty()) {
    py_file = any_file;
    py_name = any_name;
    py_line = any_line;
  }
  std::string site;
  if (!py_file.empty()) {
    site = fmt::format("{}:{} {}", Cut(FileNameOf(py_file)), py_line, Cut(py_name));
  }
  if (op.empty()) return site;
  return site.empty() ? op : op + " @ " + site;
}

bool SniffTorchSnapshot(std::string_view first_bytes) {
  return first_bytes.size() >= 2 && static_cast<uint8_t>(first_bytes[0]) == 0x80 &&
         static_cast<uint8_t>(first_bytes[1]) >= 2 && static_cast<uint8_t>(first_bytes[1]) <= 5;
}

StatusOr<Trace> ImportTorchSnapshotBytes(std::string_view bytes, const std::string& path,
                                         uint64_t max_bytes) {
  auto doc = ReadPlainPickle(bytes, max_bytes);
  if (!doc.ok()) {
    return InvalidInputError(fmt::format("{}: {}", path, doc.status().message()));
  }
  return Mapper(*doc, path, bytes.size()).Run();
}

StatusOr<Trace> ImportTorchSnapshot(const std::string& path) {
  ASSIGN_OR_RETURN(uint64_t limit, MaxInflatedBytes());
  ASSIGN_OR_RETURN(std::string bytes, ReadInput(path));
  return ImportTorchSnapshotBytes(bytes, path, limit);
}

}  // namespace sightline
