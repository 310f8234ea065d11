// Lamport one-shot all-reduce for small messages: the data is its own arrival flag, so a call has
// no barrier and no flag round trip. Each rank stores its input into slot `rank` of buffer b in
// every peer's Lamport region and reduces as soon as every peer's element in its own buffer b no
// longer holds the sentinel (negative zero of the dtype: inputs are canonicalised, -0 -> +0, so
// real data never carries it). Three buffers rotate (b = call % 3, kept in device memory): at call
// k a peer may already be writing buffer k+1 (it is one call ahead at most, since call k+1 needs
// this rank's data), so the only buffer free to clear is k-1's, which this call sets back to the
// sentinel while it waits for the peers' data; call k+2 writes it again. Nothing per call comes
// from the host, so eager back-to-back calls and CUDA graph replay work alike.
//
// Prerequisite: the region holds the sentinel of the dtype used (LaunchLamportReset, then a host
// barrier, before the first call and whenever the dtype changes). Sums are in fp32 in rank order,
// so every rank gets the same bits; the only difference from a plain sum is that an element whose
// inputs are all -0 gives +0.
#include <string>

#include "device_common.cuh"
#include "dispatch.cuh"
#include "kernels.h"

namespace sightline::allreduce {
namespace {

// The sentinel, per element size: negative zero. Bit patterns on 32-bit words.
template <typename T>
struct Sentinel {
  // 16-bit types: -0 is 0x8000 in each half.
  static constexpr uint32_t kWord = 0x80008000u;
  __device__ static bool Present(uint32_t w) {
    return (w & 0xffffu) == 0x8000u || (w >> 16) == 0x8000u;
  }
  __device__ static uint32_t Canonical(uint32_t w) {
    if ((w & 0xffffu) == 0x8000u) w &= 0xffff0000u;
    if ((w >> 16) == 0x8000u) w &= 0x0000ffffu;
    return w;
  }
};
template <>
struct Sentinel<float> {
  static constexpr uint32_t kWord = 0x80000000u;
  __device__ static bool Present(uint32_t w) { return w == kWord; }
  __device__ static uint32_t Canonical(uint32_t w) { return w == kWord ? 0u : w; }
};

template <typename T>
__device__ inline uint4 Canonicalise(uint4 v) {
  v.x = Sentinel<T>::Canonical(v.x);
  v.y = Sentinel<T>::Canonical(v.y);
  v.z = Sentinel<T>::Canonical(v.z);
  v.w = Sentinel<T>::Canonical(v.w);
  return v;
}
template <typename T>
__device__ inline bool Arrived(const uint4& v) {
  return !(Sentinel<T>::Present(v.x) || Sentinel<T>::Present(v.y) || Sentinel<T>::Present(v.z) ||
           Sentinel<T>::Present(v.w));
}
__device__ inline uint4 SentinelVec(uint32_t word) { return make_uint4(word, word, word, word); }

// Peers write this memory while we poll it: a volatile load goes to L2 every time (never a stale
// L1 line), and the "memory" clobber keeps the compiler from moving our own stores across it.
__device__ inline uint4 LoadVolatile(const uint4* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

// c.base[r] without indexing the kernel parameter at run time (which makes the compiler copy the
// whole DeviceComm to local memory first: a dependent memory load at the start of every call).
__device__ inline char* BaseOf(const DeviceComm& c, int r) {
  char* b = c.base[0];
#pragma unroll
  for (int p = 1; p < kMaxRanks; ++p) b = r == p ? c.base[p] : b;
  return b;
}
__device__ inline uint2* LamportStateOf(const DeviceComm& c) {
  return reinterpret_cast<uint2*>(BaseOf(c, c.rank) + kLamportStateOffset);
}
// Slot `src` of buffer `buf` in rank r's Lamport region.
__device__ inline uint4* LamportSlot(const DeviceComm& c, int r, int buf, int src) {
  return reinterpret_cast<uint4*>(BaseOf(c, r) + LamportRegionOffset(c.cap_bytes, c.world) +
                                  (static_cast<size_t>(buf) * c.world + src) *
                                      static_cast<size_t>(c.lamport_cap_bytes));
}

// Starts a call: returns {this call's buffer, the previous call's size in vectors}. Like
// BeginCall, every kernel keeps all kMaxBlocks entries equal, so the grid may change per call.
__device__ inline uint2 BeginLamport(const DeviceComm& c, uint32_t nvec) {
  __shared__ uint2 s_state;
  uint2* state = LamportStateOf(c);
  if (threadIdx.x == 0) s_state = state[blockIdx.x];
  __syncthreads();
  const uint2 old = s_state;
  const uint2 next = make_uint2(old.x + 1 == kLamportBuffers ? 0u : old.x + 1, nvec);
  for (int b = blockIdx.x + threadIdx.x * gridDim.x; b < kMaxBlocks; b += gridDim.x * blockDim.x)
    state[b] = next;
  return make_uint2(next.x, old.y);
}

// Waits until element i of `slot` has arrived (no sentinel left in it) and returns it.
template <typename T>
__device__ inline uint4 AwaitVec(const DeviceComm& c, const uint4* slot, int64_t i, int peer,
                                 int buf) {
  uint4 v = LoadVolatile(slot + i);
  if (Arrived<T>(v)) return v;
  const uint64_t start = GlobalTimerNs();
  int spins = 0;
  while (!Arrived<T>(v = LoadVolatile(slot + i))) {
    if (++spins == 1024) {
      spins = 0;
      if (GlobalTimerNs() - start > c.timeout_ns) {
        if (c.error != nullptr && c.error->code == 0) {
          c.error->missing_rank = peer;
          c.error->block = blockIdx.x;
          c.error->expected = static_cast<uint32_t>(buf);
          c.error->seen = v.x;
          __threadfence_system();
          c.error->code = 2;
        }
        break;
      }
    }
  }
  return v;
}

template <typename T, int K>
__global__ void __launch_bounds__(kElemThreads)
    LamportKernel(const __grid_constant__ DeviceComm c, const uint4* __restrict__ in,
                  uint4* __restrict__ out, int64_t nvec) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // The first vector's load does not depend on the state: start it before the state read.
  uint4 own0 = first < nvec ? in[first] : uint4{};
  const uint2 st = BeginLamport(c, static_cast<uint32_t>(nvec));
  const int buf = static_cast<int>(st.x);
  const int prev = buf == 0 ? kLamportBuffers - 1 : buf - 1;
  const uint32_t prev_nvec = st.y;

  // 1. Data out: into slot `rank` of buffer `buf` of every peer.
  for (int64_t i = first; i < nvec; i += stride) {
    const uint4 v = Canonicalise<T>(i == first ? own0 : in[i]);
#pragma unroll
    for (int p = 0; p < K; ++p) {
      if (p < c.world && p != c.rank) LamportSlot(c, p, buf, c.rank)[i] = v;
    }
  }
  // 2. While it travels: the previous call's buffer back to the sentinel (peers will not write it
  //    before call k+2, which needs this rank's data of call k+1).
  const uint4 sentinel = SentinelVec(Sentinel<T>::kWord);
#pragma unroll
  for (int p = 0; p < K; ++p) {
    if (p < c.world && p != c.rank) {
      uint4* slot = LamportSlot(c, c.rank, prev, p);
      for (int64_t i = first; i < prev_nvec; i += stride) slot[i] = sentinel;
    }
  }
  // 3. Reduce each vector as soon as every peer's copy of it has arrived, in rank order.
  for (int64_t i = first; i < nvec; i += stride) {
    const uint4 own = Canonicalise<T>(i == first ? own0 : in[i]);
    uint4 v[K];
#pragma unroll
    for (int p = 0; p < K; ++p) {
      if (p < c.world)
        v[p] = p == c.rank ? own : AwaitVec<T>(c, LamportSlot(c, c.rank, buf, p), i, p, buf);
    }
    float acc[VecTraits<T>::kN];
#pragma unroll
    for (int j = 0; j < VecTraits<T>::kN; ++j) acc[j] = 0.f;
#pragma unroll
    for (int p = 0; p < K; ++p) {
      if (p < c.world) VecTraits<T>::Add(acc, v[p]);
    }
    out[i] = VecTraits<T>::Pack(acc);
  }
}

__global__ void LamportResetKernel(const __grid_constant__ DeviceComm c, uint32_t word,
                                   size_t nvec) {
  uint4* region =
      reinterpret_cast<uint4*>(BaseOf(c, c.rank) + LamportRegionOffset(c.cap_bytes, c.world));
  const uint4 s = SentinelVec(word);
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < nvec;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    region[i] = s;
  uint2* state = LamportStateOf(c);
  for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < kMaxBlocks; b += gridDim.x * blockDim.x)
    state[b] = make_uint2(0u, 0u);
}

}  // namespace

std::string LamportLimit(const DeviceComm& c, Dtype d, int64_t count) {
  const int64_t bytes = count * DtypeBytes(d);
  if (bytes % 16 != 0) return "size is not a multiple of 16 bytes";
  if (bytes > c.lamport_cap_bytes) return "size exceeds the Lamport buffers (--lamport-max)";
  return "";
}

cudaError_t LaunchLamportReset(const DeviceComm& c, Dtype d, cudaStream_t stream) {
  const size_t nvec = static_cast<size_t>(kLamportBuffers) * c.world *
                      static_cast<size_t>(c.lamport_cap_bytes) / 16;
  const uint32_t word = d == Dtype::kFp32 ? Sentinel<float>::kWord : Sentinel<__half>::kWord;
  LamportResetKernel<<<BlocksFor(static_cast<int64_t>(nvec), 256, kMaxBlocks), 256, 0, stream>>>(
      c, word, nvec);
  return cudaGetLastError();
}

cudaError_t LaunchLamport(const DeviceComm& c, Dtype d, const void* in, void* out, int64_t count,
                          int max_blocks, cudaStream_t stream) {
  const int64_t nvec = count * DtypeBytes(d) / 16;
  // Blocks wait for the same block of each peer, so all must be resident: at most max_blocks
  // (the harness caps it at the multiprocessor count).
  const int blocks = BlocksFor(nvec, kElemThreads, max_blocks);
  return DispatchTypeAndRanks(d, c.world, [&](auto t, auto k) {
    using T = decltype(t);
    constexpr int kK = decltype(k)::value;
    LamportKernel<T, kK><<<blocks, kElemThreads, 0, stream>>>(c, static_cast<const uint4*>(in),
                                                              static_cast<uint4*>(out), nvec);
    return cudaGetLastError();
  });
}

}  // namespace sightline::allreduce
