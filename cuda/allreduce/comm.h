// What the all-reduce kernels see of the group: each rank's peer-visible buffer (CUDA IPC) and the
// flag protocol's layout. Shared by the host harness and the kernels (cuda/allreduce/).
//
// Each rank owns one IPC allocation:
//   [flags: kMaxBlocks x kMaxRanks uint64, written by peers]
//   [calls: kMaxBlocks uint64, this rank's per-block call counters, read and written only here]
//   [parity 0: slot 0 .. slot world-1 (cap bytes each) | result (cap bytes)] [parity 1: same]
// Push kernels (the default) write their input into slot `rank` of each peer's buffer, meet the
// peers at a flag barrier and then read only local memory; pull kernels (--pull) copy their input
// into their own slot 0 and read the peers' after the barrier. Parity alternates per call, so a
// rank can start call k+1 while a slow peer still reads call k's data: overwriting parity k%2 again
// (call k+2) needs a barrier of call k+1, which the slow peer reaches only after it finished call
// k. All per-call state (call counter, flag values) lives in device memory, so back-to-back
// launches and CUDA graph replay need nothing from the host. Counters and flags are 64-bit, so
// they never wrap: a flag that a block left untouched for any number of calls (a smaller grid)
// still reads as older than every value a later call waits for.
//
// The Lamport one-shot (lamport.cu) has a region of its own after the two parities (absent when
// lamport_cap_bytes is 0): [buffer 0: slot 0 .. slot world-1 (lamport_cap bytes each)] [buffer 1]
// [buffer 2]. Peers store their data into slot `peer` of buffer call%3; a slot element that holds
// the sentinel (negative zero of the dtype) has not arrived yet, so the data is its own flag. Its
// per-block state (this call's buffer, the previous call's size) sits in the header after the
// call counters.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sightline::allreduce {

inline constexpr int kMaxRanks = 8;
inline constexpr int kMaxBlocks = 256;
inline constexpr size_t kHeaderBytes = 32768;  // flags + calls + Lamport state, rounded up
inline constexpr size_t kLamportStateOffset = kMaxBlocks * kMaxRanks * 8 + kMaxBlocks * 8;
static_assert(kLamportStateOffset + kMaxBlocks * 8 <= kHeaderBytes);
inline constexpr int kLamportBuffers = 3;
inline constexpr int kDefaultPipelineIters = 4;

enum class Dtype { kBf16, kFp16, kFp32 };

// The order in which a block visits the peers in the phases that talk to one peer at a time (the
// two-shot reduce-scatter sends and the gathers that read owners' results; PeerAt in
// device_common.cuh). Only the transfer order changes: every sum is still taken in rank order.
enum class PeerOrder {
  kSpread,  // rank r, block b starts with peer r+1+b (mod): each rank's blocks cover all peers
  kRank,    // rank r starts with peer r+1, every block alike
  kFixed,   // rank order 0, 1, ... on every rank (all senders start with the same receiver)
};

inline int DtypeBytes(Dtype d) { return d == Dtype::kFp32 ? 4 : 2; }
inline const char* DtypeName(Dtype d) {
  return d == Dtype::kBf16 ? "bf16" : d == Dtype::kFp16 ? "fp16" : "fp32";
}

// Written by a device spin loop that gave up (mapped pinned host memory, read by the host after a
// sync or by the watchdog while a kernel still runs).
struct DeviceError {
  volatile int code;  // 0 = none, 1 = flag wait timed out, 2 = Lamport data wait timed out
  volatile int missing_rank;
  volatile int block;
  volatile uint64_t expected;
  volatile uint64_t seen;
};

struct DeviceComm {
  int rank = 0;
  int world = 1;
  char* base[kMaxRanks] = {};     // each rank's IPC allocation, mapped here
  int64_t cap_bytes = 0;          // stage and result size per parity
  int64_t lamport_cap_bytes = 0;  // Lamport slot size (0: no Lamport region)
  uint64_t timeout_ns = 0;        // a flag wait longer than this is an error
  bool push = true;               // push kernels (remote stores) or pull kernels (remote loads)
  PeerOrder peer_order = PeerOrder::kSpread;
  // The push two-shot's pipeline (twoshot.cu): 16-byte vectors per thread in one chunk of a
  // block's share of a segment; 0 = one chunk (send, barrier, reduce, barrier, gather).
  int pipeline_iters = kDefaultPipelineIters;
  DeviceError* error = nullptr;
};

constexpr size_t LamportRegionOffset(int64_t cap_bytes, int world) {
  return kHeaderBytes + 2 * static_cast<size_t>(world + 1) * static_cast<size_t>(cap_bytes);
}
inline size_t CommAllocBytes(int64_t cap_bytes, int world, int64_t lamport_cap_bytes) {
  return LamportRegionOffset(cap_bytes, world) + static_cast<size_t>(kLamportBuffers) *
                                                     static_cast<size_t>(world) *
                                                     static_cast<size_t>(lamport_cap_bytes);
}

}  // namespace sightline::allreduce
