// A PyTorch memory snapshot as read (torch_snapshot_importer.cc fills it) and what its dump says
// of its history: each allocation's size as the caching allocator counts it, the pool its memory
// lay in, and which of the dump's blocks and private-pool segments the history does not explain
// (they predate it). docs/formats/torch_snapshot.md, "Sizes", "The state before the history" and
// "Pool and purpose".
#pragma once

#include <cstdint>
#include <vector>

#include "importers/torch_snapshot/memory_purpose.h"
#include "importers/torch_snapshot/pickle_reader.h"

namespace sightline::torch_snapshot {

// One history entry (`device_traces`), as read.
struct Entry {
  enum Action { kAlloc, kFree, kFreeCompleted, kSegmentAlloc, kSegmentFree, kOom, kOther };
  Action action = kOther;
  uint64_t address = 0;
  int64_t size = 0;      // as recorded: an allocation's is the size asked for
  int64_t time_us = -1;  // -1: none
  PickleValue frames;
};

// A segment at the dump: one cudaMalloc (or an expandable segment's mapped range), in the default
// pool or a private one (segment_pool_id other than (0, 0): a CUDA graph's or a MemPool).
struct Segment {
  uint64_t address = 0;
  int64_t size = 0;
  bool private_pool = false;
};

// An active_allocated block at the dump.
struct Block {
  uint64_t address = 0;
  int64_t size = 0;
  bool private_pool = false;  // its segment's pool
  PickleValue frames;
};

// One device of the snapshot.
struct Device {
  int64_t allocated_at_dump = 0, reserved_at_dump = 0;
  std::vector<Block> live_at_dump;
  std::vector<Segment> segments;  // sorted by address before ReplayHistory
  std::vector<Entry> history;
};

struct Replay {
  std::vector<int64_t> size;       // per entry: allocations and frees, as the allocator counts
  std::vector<PoolHint> pool;      // per entry: where its memory lay, when the dump says
  std::vector<size_t> pre_blocks;  // live_at_dump indices that the history does not allocate
  std::vector<size_t> pre_pools;   // segments of private pools that the history does not create
  int64_t net_alloc = 0, net_reserved = 0;  // the history's change of the totals
};

// A request's size as the allocator rounds it (round_size without roundup_power2_divisions: at
// least 512 B, a multiple of 512 B).
int64_t RoundLikeAllocator(int64_t size);

// The dump's segment that holds `address` (segments sorted by address), or nullptr.
const Segment* SegmentAt(const Device& d, uint64_t address);

// Sizes: an allocation still alive at the dump takes its block's size, any other is rounded;
// a free takes its allocation's. Pool: where no segment_free/segment_unmap covers the address later
// in the history, the memory lies in the dump's segment holding it. Linear in the history (a
// merged set of freed ranges, walked backwards) and the dump.
Replay ReplayHistory(const Device& d);

}  // namespace sightline::torch_snapshot
