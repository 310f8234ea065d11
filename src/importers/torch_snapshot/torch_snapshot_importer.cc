#include "importers/torch_snapshot/torch_snapshot_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include "base/file_io.h"
#include "base/input_data.h"
#include "base/input_limits.h"
#include "model/trace_builder.h"

namespace sightline {
namespace {

constexpr size_t kMaxFramesScanned = 512;  // a call site is near the top of a stack
// The parts of a call site are cut to this: a name reached through the memo a million times must
// not be copied whole each time.
constexpr size_t kMaxSitePart = 256;

std::string_view Cut(std::string_view s) { return s.substr(0, kMaxSitePart); }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// One history entry, as read.
struct Entry {
  enum Action { kAlloc, kFree, kFreeCompleted, kSegmentAlloc, kSegmentFree, kOom, kOther };
  Action action = kOther;
  uint64_t address = 0;
  int64_t size = 0;
  int64_t time_us = -1;
  PickleValue frames;
};

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
  struct Device {
    int64_t allocated_at_dump = 0, reserved_at_dump = 0;
    struct Block {
      uint64_t address;
      int64_t size;
      PickleValue frames;
    };
    std::vector<Block> live_at_dump;  // active_allocated blocks
    std::vector<Entry> history;
  };

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

  Status ReadSegments(const PickleValue& segments) {
    const auto* list = doc_.List(segments);
    if (list == nullptr) return Status::Ok();
    for (const PickleValue& seg : *list) {
      RETURN_IF_ERROR(CheckBudget());
      int64_t device = -1, total = 0;
      int32_t id = 0;
      if (!doc_.GetInt(seg, "device", &device) || !DeviceId(device, &id) ||
          !doc_.GetInt(seg, "total_size", &total) || total < 0) {
        ++unusable_segments_;
        continue;
      }
      Device& d = devices_[id];
      d.reserved_at_dump += total;
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
            {static_cast<uint64_t>(address), size, frames ? *frames : PickleValue{}});
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
      // The history's net change, to anchor the totals at the dump's state.
      int64_t net_alloc = 0, net_reserved = 0;
      std::unordered_map<uint64_t, int64_t> live;
      for (const Entry& e : d.history) {
        if (e.action == Entry::kAlloc) {
          net_alloc += e.size;
          live[e.address] = e.size;
        } else if (e.action == Entry::kFree) {
          auto it = live.find(e.address);
          net_alloc -= it != live.end() ? it->second : e.size;
          if (it != live.end()) live.erase(it);
        } else if (e.action == Entry::kSegmentAlloc) {
          net_reserved += e.size;
        } else if (e.action == Entry::kSegmentFree) {
          net_reserved -= e.size;
        }
      }
      int64_t allocated = d.allocated_at_dump - net_alloc;
      int64_t reserved = d.reserved_at_dump - net_reserved;
      if (allocated < 0 || reserved < 0) {
        ++inconsistent_devices_;
        allocated = std::max<int64_t>(allocated, 0);
        reserved = std::max<int64_t>(reserved, 0);
      }
      TraceBuilder::MemoryEventRow row;
      row.device = id;
      row.kind = MemoryKind::kDevice;
      if (d.history.empty()) {
        // No history (recording was off): the dump's live blocks, all at time 0.
        if (!d.live_at_dump.empty()) ++no_history_devices_;
        allocated = 0;  // the blocks below are all there is
        for (const Device::Block& blk : d.live_at_dump) {
          allocated += blk.size;
          row.bytes = blk.size;
          row.address = blk.address;
          row.total_allocated = allocated;
          row.total_reserved = reserved;
          row.name = SiteId(b, blk.frames);
          b.AddMemoryEvent(row);
          RETURN_IF_ERROR(CheckBudget());
        }
        continue;
      }
      live.clear();
      int64_t order = 0;
      for (const Entry& e : d.history) {
        RETURN_IF_ERROR(CheckBudget());
        row.time_ns = e.time_us >= 0 ? (e.time_us - t0) * 1000 : order * 1000;
        ++order;
        row.name = StringId{};
        row.address = e.address;
        switch (e.action) {
          case Entry::kAlloc:
            allocated += e.size;
            live[e.address] = e.size;
            row.bytes = e.size;
            row.name = SiteId(b, e.frames);
            break;
          case Entry::kFree: {
            auto it = live.find(e.address);
            const int64_t size = it != live.end() ? it->second : e.size;
            if (it != live.end()) live.erase(it);
            allocated -= size;
            row.bytes = -size;
            break;
          }
          case Entry::kSegmentAlloc:
          case Entry::kSegmentFree:
            reserved += e.action == Entry::kSegmentAlloc ? e.size : -e.size;
            row.bytes = 0;  // a totals-only row
            row.address = 0;
            break;
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
    const bool torch_internal = file.find("/torch/") != std::string_view::npos;
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

StatusOr<Trace> ImportTorchSnapshot(const std::string& path, const ImportOptions& /*options*/) {
  ASSIGN_OR_RETURN(uint64_t limit, MaxInflatedBytes());
  ASSIGN_OR_RETURN(std::string bytes, ReadInput(path));
  return ImportTorchSnapshotBytes(bytes, path, limit);
}

}  // namespace sightline
