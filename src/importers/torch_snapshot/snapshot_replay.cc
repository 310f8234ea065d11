#include "importers/torch_snapshot/snapshot_replay.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

namespace sightline::torch_snapshot {
namespace {

// The caching allocator's smallest block and its rounding (c10 CUDACachingAllocator kMinBlockSize).
constexpr int64_t kMinBlockBytes = 512;

// Address ranges [start, end), kept merged: the segments freed after a point of the history.
class RangeUnion {
 public:
  void Add(uint64_t start, uint64_t end) {
    if (end <= start) return;
    auto it = ranges_.upper_bound(start);
    if (it != ranges_.begin() && std::prev(it)->second >= start) {
      --it;
      start = it->first;
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    while (it != ranges_.end() && it->first <= end) {
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_[start] = end;
  }
  bool Contains(uint64_t a) const {
    auto it = ranges_.upper_bound(a);
    return it != ranges_.begin() && std::prev(it)->second > a;
  }

 private:
  std::map<uint64_t, uint64_t> ranges_;
};

}  // namespace

int64_t RoundLikeAllocator(int64_t size) {
  if (size <= 0) return size;
  if (size < kMinBlockBytes) return kMinBlockBytes;
  if (size > std::numeric_limits<int64_t>::max() - kMinBlockBytes) return size;
  return (size + kMinBlockBytes - 1) / kMinBlockBytes * kMinBlockBytes;
}

const Segment* SegmentAt(const Device& d, uint64_t address) {
  auto it = std::upper_bound(d.segments.begin(), d.segments.end(), address,
                             [](uint64_t a, const Segment& s) { return a < s.address; });
  if (it == d.segments.begin()) return nullptr;
  --it;
  return address - it->address < static_cast<uint64_t>(it->size) ? &*it : nullptr;
}

Replay ReplayHistory(const Device& d) {
  Replay r;
  const size_t n = d.history.size();
  r.size.assign(n, 0);
  r.pool.assign(n, PoolHint::kUnknown);
  // The allocations still alive at the end of the history, by address.
  std::unordered_map<uint64_t, size_t> live;
  for (size_t i = 0; i < n; ++i) {
    const Entry& e = d.history[i];
    if (e.action == Entry::kAlloc) {
      live[e.address] = i;
    } else if (e.action == Entry::kFree) {
      live.erase(e.address);
    }
  }
  // The allocator counts a block's size, the history the size asked for: a block alive at the
  // dump gives its own size; the others are rounded as the allocator rounds.
  std::unordered_map<size_t, int64_t> block_size;  // entry index -> the dump block's size
  for (size_t k = 0; k < d.live_at_dump.size(); ++k) {
    auto it = live.find(d.live_at_dump[k].address);
    if (it == live.end()) {
      r.pre_blocks.push_back(k);
    } else {
      block_size[it->second] = d.live_at_dump[k].size;
    }
  }
  // Whether a segment covering an entry's address is freed after it (backwards: the ranges
  // freed later than the entry). Where none is, the entry's memory lies in the dump's segment.
  RangeUnion freed_later;
  for (size_t i = n; i-- > 0;) {
    const Entry& e = d.history[i];
    if (e.action == Entry::kSegmentFree) {
      freed_later.Add(e.address, e.address + static_cast<uint64_t>(e.size));
      continue;
    }
    if (e.action != Entry::kAlloc && e.action != Entry::kSegmentAlloc) continue;
    if (freed_later.Contains(e.address)) continue;
    if (const Segment* s = SegmentAt(d, e.address)) {
      r.pool[i] = s->private_pool ? PoolHint::kPrivate : PoolHint::kDefault;
    }
  }
  std::unordered_map<uint64_t, int64_t> sizes;  // allocated address -> counted size
  for (size_t i = 0; i < n; ++i) {
    const Entry& e = d.history[i];
    if (e.action == Entry::kAlloc) {
      auto b = block_size.find(i);
      r.size[i] = b != block_size.end() ? b->second : RoundLikeAllocator(e.size);
      sizes[e.address] = r.size[i];
      r.net_alloc += r.size[i];
    } else if (e.action == Entry::kFree) {
      auto it = sizes.find(e.address);
      r.size[i] = it != sizes.end() ? it->second : RoundLikeAllocator(e.size);
      if (it != sizes.end()) sizes.erase(it);
      r.net_alloc -= r.size[i];
    } else if (e.action == Entry::kSegmentAlloc) {
      r.size[i] = e.size;
      r.net_reserved += e.size;
    } else if (e.action == Entry::kSegmentFree) {
      r.size[i] = e.size;
      r.net_reserved -= e.size;
    }
  }
  // A private pool's segment that no segment_alloc / segment_map of the history lies in was
  // there before the history began.
  std::vector<char> created(d.segments.size(), 0);
  for (const Entry& e : d.history) {
    if (e.action != Entry::kSegmentAlloc) continue;
    if (const Segment* s = SegmentAt(d, e.address)) created[s - d.segments.data()] = 1;
  }
  for (size_t k = 0; k < d.segments.size(); ++k) {
    if (d.segments[k].private_pool && !created[k]) r.pre_pools.push_back(k);
  }
  return r;
}

}  // namespace sightline::torch_snapshot
