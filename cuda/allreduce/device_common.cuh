// Device-side building blocks of the custom all-reduce kernels: the per-call counter, the flag
// barrier between peers (system-scope release/acquire, with a timeout), and 16-byte vector math.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "comm.h"

namespace sightline::allreduce {

__device__ inline uint64_t* FlagsOf(const DeviceComm& c, int r) {
  return reinterpret_cast<uint64_t*>(c.base[r]);
}
__device__ inline uint64_t* CallsOf(const DeviceComm& c) {
  return reinterpret_cast<uint64_t*>(c.base[c.rank]) + kMaxBlocks * kMaxRanks;
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

__device__ inline void StoreRelease(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ inline uint64_t LoadAcquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
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
__device__ inline uint64_t BeginCall(const DeviceComm& c) {
  __shared__ uint64_t s_call;
  uint64_t* calls = CallsOf(c);
  if (threadIdx.x == 0) s_call = calls[blockIdx.x] + 1;
  __syncthreads();
  const uint64_t call = s_call;
  for (int b = blockIdx.x + threadIdx.x * gridDim.x; b < kMaxBlocks; b += gridDim.x * blockDim.x)
    calls[b] = call;
  return call;
}

// The flag value of step `step` (1, 2, ... below kFlagSteps) of call `call`: a block's values only
// grow, within a call and from call to call, so a wait for value v is over once the flag holds v or
// more, whatever step the peer has reached since.
inline constexpr uint64_t kFlagSteps = uint64_t{1} << 16;
__device__ inline uint64_t FlagValue(uint64_t call, uint64_t step) {
  return call * kFlagSteps + step;
}

// All threads of the block call this, after their stores that peers will read: thread p < world
// tells rank p that this block reached `value` (bar.sync, then a system-scope release, so the
// whole block's earlier stores are visible to a peer that acquires the value).
__device__ inline void SignalPeers(const DeviceComm& c, uint64_t value) {
  __syncthreads();
  const int p = threadIdx.x;
  if (p < c.world) StoreRelease(FlagsOf(c, p) + blockIdx.x * kMaxRanks + c.rank, value);
}

// All threads of the block call this: thread p < world waits until rank p's same block has
// signalled `value` or more (acquire, then bar.sync, so the whole block may read what that block
// stored before). A wait longer than c.timeout_ns is recorded in c.error and given up.
__device__ inline void WaitPeers(const DeviceComm& c, uint64_t value) {
  const int p = threadIdx.x;
  if (p < c.world) {
    const uint64_t* mine = FlagsOf(c, c.rank) + blockIdx.x * kMaxRanks + p;
    uint64_t seen = LoadAcquire(mine);
    if (seen < value) {
      const uint64_t start = GlobalTimerNs();
      int spins = 0;
      while ((seen = LoadAcquire(mine)) < value) {
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

// Signal, then wait: every peer's same block has reached `value` too.
__device__ inline void PeerBarrier(const DeviceComm& c, uint64_t value) {
  SignalPeers(c, value);
  WaitPeers(c, value);
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
