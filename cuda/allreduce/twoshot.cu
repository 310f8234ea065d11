// Two-shot all-reduce: reduce-scatter, then all-gather. The message is cut into `world` segments;
// rank r reduces segment r (in rank order) and, after a second barrier, every rank has every
// segment's sum from its owner. 2 (world-1)/world x size bytes cross NVLink per rank: the choice
// for large messages. Results are the owner's bits everywhere, so identical on every rank.
// The phases that talk to one peer at a time visit the peers in PeerAt's order (staggered by rank
// and block by default, so that the ranks do not all send to, or read from, the same owner at
// once); the sums are taken in rank order whatever that order is.
// - push (default): ranks store segment s of their input into owner s's slot `rank`; the owner
//   reduces from local memory and stores the sum into every rank's result buffer; the gather is a
//   local copy.
// - pull (--pull): ranks stage their input locally; owners read the peers' stages, and the gather
//   reads the owners' results over NVLink.
#include <string>

#include "device_common.cuh"
#include "dispatch.cuh"
#include "kernels.h"

namespace sightline::allreduce {
namespace {

__device__ inline int64_t SegBegin(int64_t nvec, int world, int s) { return nvec * s / world; }

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

template <typename T, int K>
__global__ void __launch_bounds__(kElemThreads)
    TwoShotPushKernel(const __grid_constant__ DeviceComm c, const uint4* __restrict__ in,
                      uint4* __restrict__ out, int64_t nvec) {
  const uint32_t call = BeginCall(c);
  const int parity = call & 1;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Block b sends the vectors that block b of each owner reduces, one owner after the other.
  for (int j = 0; j + 1 < c.world; ++j) {
    const int s = PeerAt(c, j);
    CopyVecs<false>(reinterpret_cast<uint4*>(SlotOf(c, s, parity, c.rank)), in,
                    SegBegin(nvec, c.world, s), SegBegin(nvec, c.world, s + 1), first, stride);
  }
  PeerBarrier(c, 2 * call - 1);
  {
    constexpr int kU = kReduceUnroll<K>;
    const int64_t e = SegBegin(nvec, c.world, c.rank + 1);
    int64_t i = SegBegin(nvec, c.world, c.rank) + first;
    // kU vectors at a time (all their loads before the first store), then the rest one by one.
    for (; i + (kU - 1) * stride < e; i += kU * stride) {
      uint4 own[kU], v[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) own[u] = in[i + u * stride];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        v[u] = SumOverRanks<T, K>(c, own[u], [&](int p) {
          return reinterpret_cast<const uint4*>(SlotOf(c, c.rank, parity, p)) + i + u * stride;
        });
      }
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        out[i + u * stride] = v[u];
#pragma unroll
        for (int p = 0; p < K; ++p) {
          if (p < c.world && p != c.rank)
            reinterpret_cast<uint4*>(ResultOf(c, p, parity))[i + u * stride] = v[u];
        }
      }
    }
    for (; i < e; i += stride) {
      const uint4 v = SumOverRanks<T, K>(c, in[i], [&](int p) {
        return reinterpret_cast<const uint4*>(SlotOf(c, c.rank, parity, p)) + i;
      });
      out[i] = v;
#pragma unroll
      for (int p = 0; p < K; ++p) {
        if (p < c.world && p != c.rank) reinterpret_cast<uint4*>(ResultOf(c, p, parity))[i] = v;
      }
    }
  }
  PeerBarrier(c, 2 * call);
  const uint4* result = reinterpret_cast<const uint4*>(ResultOf(c, c.rank, parity));
  for (int j = 0; j + 1 < c.world; ++j) {
    const int s = PeerAt(c, j);
    CopyVecs<true>(out, result, SegBegin(nvec, c.world, s), SegBegin(nvec, c.world, s + 1), first,
                   stride);
  }
}

template <typename T, int K>
__global__ void __launch_bounds__(kElemThreads)
    TwoShotPullKernel(const __grid_constant__ DeviceComm c, const uint4* __restrict__ in,
                      uint4* __restrict__ out, int64_t nvec) {
  const uint32_t call = BeginCall(c);
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
  PeerBarrier(c, 2 * call - 1);
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
  PeerBarrier(c, 2 * call);
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
  return DispatchTypeAndRanks(d, c.world, [&](auto t, auto k) {
    using T = decltype(t);
    constexpr int kK = decltype(k)::value;
    const uint4* vin = static_cast<const uint4*>(in);
    uint4* vout = static_cast<uint4*>(out);
    if (c.push) {
      TwoShotPushKernel<T, kK><<<blocks, kElemThreads, 0, stream>>>(c, vin, vout, nvec);
    } else {
      TwoShotPullKernel<T, kK><<<blocks, kElemThreads, 0, stream>>>(c, vin, vout, nvec);
    }
    return cudaGetLastError();
  });
}

}  // namespace sightline::allreduce
