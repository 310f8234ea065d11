// Two-shot all-reduce: reduce-scatter, then all-gather. The message is cut into `world` segments;
// rank r reduces segment r (in rank order) and, after a second barrier, every rank has every
// segment's sum from its owner. 2 (world-1)/world x size bytes cross NVLink per rank: the choice
// for large messages. Results are the owner's bits everywhere, so identical on every rank.
// The phases that talk to one peer at a time visit the peers in PeerAt's order (staggered by rank
// and block by default, so that the ranks do not all send to, or read from, the same owner at
// once); the sums are taken in rank order whatever that order is.
// - push (default): ranks store segment s of their input into owner s's slot `rank`; the owner
//   reduces from local memory and stores the sum into every rank's result buffer; the gather is a
//   local copy. Pipelined: per chunk flags instead of two barriers, so that the three overlap
//   (TwoShotPushKernel; DeviceComm::pipeline_iters sets the chunk).
// - pull (--pull): ranks stage their input locally; owners read the peers' stages, and the gather
//   reads the owners' results over NVLink.
#include <string>

#include "device_common.cuh"
#include "dispatch.cuh"
#include "kernels.h"
#include "pipeline_plan.h"

namespace sightline::allreduce {
namespace {

// The push kernel signals steps 1 .. chunks+1 of a call (FlagValue): all below kFlagSteps.
static_assert(kMaxPipelineChunks + 1 < kFlagSteps);

// Copies the vectors begin + first, begin + first + stride, ... below end from src to dst, with
// kCopyUnroll loads in flight per thread before the first store (a single load per iteration
// leaves the copy bound by memory latency, not bandwidth). kCg: src was written by a peer (bypass
// L1, as after an acquire).
constexpr int kCopyUnroll = 4;
template <bool kCg>
__device__ inline void CopyVecs(uint4* dst, const uint4* __restrict__ src, int64_t begin,
                                int64_t end, int64_t first, int64_t stride) {
  int64_t i = begin + first;
  for (; i + (kCopyUnroll - 1) * stride < end; i += kCopyUnroll * stride) {
    uint4 v[kCopyUnroll];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u)
      v[u] = kCg ? __ldcg(src + i + u * stride) : src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < end; i += stride) dst[i] = kCg ? __ldcg(src + i) : src[i];
}

// Vectors a thread reduces per iteration in the reduce-scatter phase: each needs `world` 16-byte
// registers, so fewer as the world grows.
template <int K>
inline constexpr int kReduceUnroll = K <= 2   ? 4
                                     : K <= 4 ? 2
                                              : 1;

// The sums of the vectors begin + first, begin + first + stride, ... below end of this rank's
// segment: stored into this rank's output and into every peer's result buffer. kU vectors at a
// time (all their loads before the first store), then the rest one by one.
template <typename T, int K>
__device__ inline void ReduceAndSend(const DeviceComm& c, int parity, const uint4* __restrict__ in,
                                     uint4* __restrict__ out, int64_t begin, int64_t end,
                                     int64_t first, int64_t stride) {
  constexpr int kU = kReduceUnroll<K>;
  auto store = [&](int64_t i, const uint4& v) {
    out[i] = v;
#pragma unroll
    for (int p = 0; p < K; ++p) {
      if (p < c.world && p != c.rank) reinterpret_cast<uint4*>(ResultOf(c, p, parity))[i] = v;
    }
  };
  auto slot = [&](int p, int64_t i) {
    return reinterpret_cast<const uint4*>(SlotOf(c, c.rank, parity, p)) + i;
  };
  int64_t i = begin + first;
  for (; i + (kU - 1) * stride < end; i += kU * stride) {
    uint4 own[kU], v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) own[u] = in[i + u * stride];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      v[u] = SumOverRanks<T, K>(c, own[u], [&](int p) { return slot(p, i + u * stride); });
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) store(i + u * stride, v[u]);
  }
  for (; i < end; i += stride) {
    store(i, SumOverRanks<T, K>(c, in[i], [&](int p) { return slot(p, i); }));
  }
}

// The push kernel, pipelined. A block's share of each segment is cut into `chunks` chunks of
// `span` vectors of the segment (chunk t: [seg + t x span, seg + (t+1) x span), of which the block
// takes every stride-th vector from `first` on). Step t = 0 .. chunks+1 of the block:
//   1. send chunk t of each peer's segment into slot `rank` of its owner;
//   2. wait until every peer's same block has finished its step t-1 (flag value t), which means
//      its chunk t-1 of this rank's segment has arrived and its sums of chunk t-2 of its own
//      segment are in this rank's result buffer;
//   3. reduce chunk t-1 of this rank's segment: the sums into the output and into every peer's
//      result buffer;
//   4. signal the end of step t (flag value t+1): sends and sums before it are visible;
//   5. copy chunk t-2 of each peer's segment from this rank's result buffer into the output.
// One signal (one drain of the block's remote stores, by one warp while the others copy on) and
// one wait per step: the sends, the sums going back and the local copies of different chunks
// overlap, where one chunk (chunks = 1) is the plain schedule, send, barrier, reduce, barrier,
// gather. Every block waits for every peer in each call (step 1), which keeps the parity argument
// of comm.h.
template <typename T, int K>
__global__ void __launch_bounds__(kElemThreads)
    TwoShotPushKernel(const __grid_constant__ DeviceComm c, const uint4* __restrict__ in,
                      uint4* __restrict__ out, int64_t nvec, int64_t span, int chunks) {
  const uint64_t call = BeginCall(c);
  const int parity = call & 1;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint4* result = reinterpret_cast<const uint4*>(ResultOf(c, c.rank, parity));
  auto lo = [&](int s, int t) { return ChunkBegin(nvec, c.world, s, t, span); };
  auto hi = [&](int s, int t) { return ChunkEnd(nvec, c.world, s, t, span); };
  for (int t = 0; t <= chunks + 1; ++t) {
    if (t < chunks) {
      // Block b sends the vectors that block b of each owner reduces, one owner after the other.
      for (int j = 0; j + 1 < c.world; ++j) {
        const int s = PeerAt(c, j);
        CopyVecs<false>(reinterpret_cast<uint4*>(SlotOf(c, s, parity, c.rank)), in, lo(s, t),
                        hi(s, t), first, stride);
      }
    }
    if (t >= 1) WaitPeers(c, FlagValue(call, t));
    if (t >= 1 && t <= chunks) {
      ReduceAndSend<T, K>(c, parity, in, out, lo(c.rank, t - 1), hi(c.rank, t - 1), first, stride);
    }
    if (t <= chunks) SignalPeers(c, FlagValue(call, t + 1));
    if (t >= 2) {
      for (int j = 0; j + 1 < c.world; ++j) {
        const int s = PeerAt(c, j);
        CopyVecs<true>(out, result, lo(s, t - 2), hi(s, t - 2), first, stride);
      }
    }
  }
}

template <typename T, int K>
__global__ void __launch_bounds__(kElemThreads)
    TwoShotPullKernel(const __grid_constant__ DeviceComm c, const uint4* __restrict__ in,
                      uint4* __restrict__ out, int64_t nvec) {
  const uint64_t call = BeginCall(c);
  const int parity = call & 1;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Stage the segments that peers reduce (block b stages the vectors peers' block b reads).
  uint4* stage = reinterpret_cast<uint4*>(StageOf(c, c.rank, parity));
  for (int j = 0; j + 1 < c.world; ++j) {
    const int s = PeerAt(c, j);
    const int64_t e = SegBegin(nvec, c.world, s + 1);
    for (int64_t i = SegBegin(nvec, c.world, s) + first; i < e; i += stride) stage[i] = in[i];
  }
  PeerBarrier(c, FlagValue(call, 1));
  uint4* result = reinterpret_cast<uint4*>(ResultOf(c, c.rank, parity));
  {
    const int64_t e = SegBegin(nvec, c.world, c.rank + 1);
    for (int64_t i = SegBegin(nvec, c.world, c.rank) + first; i < e; i += stride) {
      const uint4 v = SumOverRanks<T, K>(c, in[i], [&](int p) {
        return reinterpret_cast<const uint4*>(StageOf(c, p, parity)) + i;
      });
      result[i] = v;
      out[i] = v;
    }
  }
  PeerBarrier(c, FlagValue(call, 2));
  for (int j = 0; j + 1 < c.world; ++j) {
    const int s = PeerAt(c, j);
    const uint4* src = reinterpret_cast<const uint4*>(ResultOf(c, s, parity));
    const int64_t e = SegBegin(nvec, c.world, s + 1);
    for (int64_t i = SegBegin(nvec, c.world, s) + first; i < e; i += stride)
      out[i] = __ldcg(src + i);
  }
}

}  // namespace

std::string TwoShotLimit(const DeviceComm& c, Dtype d, int64_t count) {
  const int64_t bytes = count * DtypeBytes(d);
  if (bytes % 16 != 0) return "size is not a multiple of 16 bytes";
  if (bytes > c.cap_bytes) return "size exceeds the staging buffer";
  return "";
}

cudaError_t LaunchTwoShot(const DeviceComm& c, Dtype d, const void* in, void* out, int64_t count,
                          int max_blocks, cudaStream_t stream) {
  const int64_t nvec = count * DtypeBytes(d) / 16;
  const int blocks = BlocksFor((nvec + c.world - 1) / c.world, kElemThreads, max_blocks);
  const TwoShotPipeline plan =
      PlanTwoShotPipeline(nvec, c.world, blocks, kElemThreads, c.pipeline_iters);
  return DispatchTypeAndRanks(d, c.world, [&](auto t, auto k) {
    using T = decltype(t);
    constexpr int kK = decltype(k)::value;
    const uint4* vin = static_cast<const uint4*>(in);
    uint4* vout = static_cast<uint4*>(out);
    if (c.push) {
      TwoShotPushKernel<T, kK>
          <<<blocks, kElemThreads, 0, stream>>>(c, vin, vout, nvec, plan.span, plan.chunks);
    } else {
      TwoShotPullKernel<T, kK><<<blocks, kElemThreads, 0, stream>>>(c, vin, vout, nvec);
    }
    return cudaGetLastError();
  });
}

}  // namespace sightline::allreduce
