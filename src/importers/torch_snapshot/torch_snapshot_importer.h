// Importer for PyTorch memory snapshots (`torch.cuda.memory._dump_snapshot(path)`, a pickle;
// docs/formats/torch_snapshot.md), read by the plain-data pickle reader (pickle_reader.h): nothing
// in the file is ever executed. Maps each device's allocation history (`device_traces`) into the
// trace model's memory events: `alloc` (+size) and `free_requested` (−size: the caching allocator's
// allocated bytes drop there; `free_completed`, when a block used by other streams becomes
// reusable, is not a second free) with the allocator's totals after each event;
// `segment_alloc`/`segment_map` and `segment_free`/`segment_unmap` change the reserved total (a
// totals-only row: bytes 0, address 0). The totals are anchored at the dump: allocated = the
// `segments`' active_allocated blocks, reserved = their total_size; sizes are the allocator's
// (a block alive at the dump gives its own; other requests are rounded as it rounds). The dump's
// blocks that the history does not allocate were there before it began: they become allocations
// marked `predates`, with their own frames, at the device's first event (and a private pool's
// segments from before the history, totals-only rows of the CUDA graph pool). The allocating call
// site comes from the entry's frames (the first Python frame outside torch, with the aten op) and
// is the event's name; the frames also give its purpose (memory_purpose.h), a private pool's
// segment (segment_pool_id other than (0, 0)) making it the CUDA graph's. Without a history, the
// blocks alive at the dump are the events (all at time 0). `oom` entries and unusable entries are
// diagnostics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/input_sniff.h"
#include "base/status.h"
#include "importers/torch_snapshot/pickle_reader.h"
#include "model/trace.h"

namespace sightline {

// A pickle of protocol 2 to 5: 0x80 then the protocol byte.
bool SniffTorchSnapshot(std::string_view first_bytes);
// A binary format: a pickle's protocol mark (0x80, protocols 2 to 5).
inline constexpr ReaderSpec kTorchSnapshotReader = {
    "torch-memory-snapshot",
    "PyTorch memory snapshot (torch.cuda.memory._dump_snapshot, a plain-data pickle)", 300,
    &SniffTorchSnapshot};
StatusOr<Trace> ImportTorchSnapshot(const std::string& path);

// The same from bytes already in memory; `path` is only used in messages and TraceSource.
// `max_bytes` bounds the decoded values (the importer passes MaxInflatedBytes()).
StatusOr<Trace> ImportTorchSnapshotBytes(std::string_view bytes, const std::string& path,
                                         uint64_t max_bytes = uint64_t{1} << 32);

// The call site of an allocation from its frames (innermost first, as the snapshot stores them):
// "aten::mm @ model.py:42 forward". Exposed for tests.
std::string SnapshotCallSite(const PickleDoc& doc, const PickleValue& frames);

}  // namespace sightline
