// Device-side building blocks of the custom all-reduce kernels: the per-call counter, the flag
// barrier between peers (system-scope release/acquire, with a timeout), and 16-byte vector math.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "comm.h"

namespace sightline::allreduce {

__device__ inline uint32_t* FlagsOf(const DeviceComm& c, int r) {
  return reinterpret_cast<uint32_t*>(c.base[r]);
}
__device__ inline uint32_t* CallsOf(const DeviceComm& c) {
  return reinterpret_cast<uint32_t*>(c.base[c.rank]) + kMaxBlocks * kMaxRanks;
}
// Rank r's slot `src` of a parity (pull kernels use slot 0 as their own stage).
__device__ inline char* SlotOf(const DeviceComm& c, int r, int parity, int src) {
  return c.base[r] + kHeaderBytes +
         (static_cast<size_t>(parity) * (c.world + 1) + src) * static_cast<size_t>(c.cap_bytes);
}
__device__ inline char* StageOf(const DeviceComm& c, int r, int parity) {
  return SlotOf(c, r, parity, 0);
}
__device__ inline char* ResultOf(const DeviceComm& c, int r, int parity) {
  return SlotOf(c, r, parity, c.world);
}
// Stores v at element i of slot `c.rank` in every peer's buffer (not this rank's own).
template <int K>
__device__ inline void PushToPeers(const DeviceComm& c, int parity, int64_t i, const uint4& v) {
#pragma unroll
  for (int p = 0; p < K; ++p) {
    if (p < c.world && p != c.rank) reinterpret_cast<uint4*>(SlotOf(c, p, parity, c.rank))[i] = v;
  }
}

// The j-th peer (0 <= j < world-1) this block visits when it talks to one peer at a time. In
// rank order every rank starts with rank 0 (rank 0 with rank 1), so all senders hit one receiver
// while the others idle; rank-staggered, step j is a permutation (rank r -> r+1+j) as long as
// the ranks keep pace; spread (the default) also offsets by the block index, so that at every
// moment each rank's blocks send to (or read from) all peers evenly, whatever the ranks' pace.
__device__ inline int PeerAt(const DeviceComm& c, int j) {
  switch (c.peer_order) {
    case PeerOrder::kFixed:
      return j < c.rank ? j : j + 1;
    case PeerOrder::kRank:
      return (c.rank + 1 + j) % c.world;
    case PeerOrder::kSpread:
      break;
  }
  return (c.rank + 1 + (j + static_cast<int>(blockIdx.x)) % (c.world - 1)) % c.world;
}
// The j-th rank (0 <= j < world) of a loop over all ranks: the peers in PeerAt's order, this rank
// last.
__device__ inline int RankAt(const DeviceComm& c, int j) {
  return j + 1 < c.world ? PeerAt(c, j) : c.rank;
}

__device__ inline void StoreRelease(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ inline uint32_t LoadAcquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Starts a call: returns its number (1, 2, ...), the same in every block and on every rank. Every
// kernel keeps all kMaxBlocks counters equal (block b also advances b + gridDim, b + 2 gridDim,
// ...), so the grid size may change from call to call.
__device__ inline uint32_t BeginCall(const DeviceComm& c) {
  __shared__ uint32_t s_call;
  uint32_t* calls = CallsOf(c);
  if (threadIdx.x == 0) s_call = calls[blockIdx.x] + 1;
  __syncthreads();
  const uint32_t call = s_call;
  for (int b = blockIdx.x + threadIdx.x * gridDim.x; b < kMaxBlocks; b += gridDim.x * blockDim.x)
    calls[b] = call;
  return call;
}

// All threads of the block call this. Thread p < world tells rank p that this block reached flag
// value `value`, then waits until rank p's same block has too. Writes made by the block before
// the barrier are visible to peers' reads after it (bar.sync, then release; acquire, then
// bar.sync).
__device__ inline void PeerBarrier(const DeviceComm& c, uint32_t value) {
  __syncthreads();
  const int p = threadIdx.x;
  if (p < c.world) {
    StoreRelease(FlagsOf(c, p) + blockIdx.x * kMaxRanks + c.rank, value);
    const uint32_t* mine = FlagsOf(c, c.rank) + blockIdx.x * kMaxRanks + p;
    uint32_t seen = LoadAcquire(mine);
    if (static_cast<int32_t>(seen - value) < 0) {
      const uint64_t start = GlobalTimerNs();
      int spins = 0;
      while (static_cast<int32_t>((seen = LoadAcquire(mine)) - value) < 0) {
        if (++spins == 1024) {
          spins = 0;
          if (GlobalTimerNs() - start > c.timeout_ns) {
            if (c.error != nullptr && c.error->code == 0) {
              c.error->missing_rank = p;
              c.error->block = blockIdx.x;
              c.error->expected = value;
              c.error->seen = seen;
              __threadfence_system();
              c.error->code = 1;
            }
            break;
          }
        }
      }
    }
  }
  __syncthreads();
}

// 16 bytes of T, widened to float for the sum.
template <typename T>
struct VecTraits;
template <>
struct VecTraits<__nv_bfloat16> {
  static constexpr int kN = 8;
  __device__ static void Add(float* acc, const uint4& v) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float2 f = __bfloat1622float2(h[i]);
      acc[2 * i] += f.x;
      acc[2 * i + 1] += f.y;
    }
  }
  __device__ static uint4 Pack(const float* acc) {
    uint4 v;
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(acc[2 * i], acc[2 * i + 1]);
    return v;
  }
};
template <>
struct VecTraits<__half> {
  static constexpr int kN = 8;
  __device__ static void Add(float* acc, const uint4& v) {
    const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float2 f = __half22float2(h[i]);
      acc[2 * i] += f.x;
      acc[2 * i + 1] += f.y;
    }
  }
  __device__ static uint4 Pack(const float* acc) {
    uint4 v;
    __half2* h = reinterpret_cast<__half2*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) h[i] = __floats2half2_rn(acc[2 * i], acc[2 * i + 1]);
    return v;
  }
};
template <>
struct VecTraits<float> {
  static constexpr int kN = 4;
  __device__ static void Add(float* acc, const uint4& v) {
    const float* f = reinterpret_cast<const float*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[i] += f[i];
  }
  __device__ static uint4 Pack(const float* acc) {
    uint4 v;
    float* f = reinterpret_cast<float*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) f[i] = acc[i];
    return v;
  }
};

// The sum of one 16-byte vector over ranks 0..world-1, always in rank order, so that every rank
// computes bit-identical results. `own` is this rank's value (read locally); the others come from
// the peers' `src(p)` pointers. All loads are issued before the first add.
template <typename T, int K, typename SrcFn>
__device__ inline uint4 SumOverRanks(const DeviceComm& c, const uint4& own, SrcFn src) {
  uint4 v[K];
#pragma unroll
  for (int p = 0; p < K; ++p) {
    if (p < c.world) v[p] = (p == c.rank) ? own : __ldcg(src(p));
  }
  float acc[VecTraits<T>::kN];
#pragma unroll
  for (int i = 0; i < VecTraits<T>::kN; ++i) acc[i] = 0.f;
#pragma unroll
  for (int p = 0; p < K; ++p) {
    if (p < c.world) VecTraits<T>::Add(acc, v[p]);
  }
  return VecTraits<T>::Pack(acc);
}

}  // namespace sightline::allreduce
