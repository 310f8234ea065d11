// One-shot all-reduce: one flag barrier, then every rank reduces the whole message itself (in rank
// order, so every rank gets the same bits). (world-1) x size bytes cross NVLink per rank: the
// choice for small messages.
// - push (default): each rank stores its input into slot `rank` of every peer's buffer, then the
//   barrier; the reduction reads local memory only.
// - pull (--pull): each rank copies its input into its own stage, then the barrier; the reduction
//   reads the peers' stages over NVLink.
#include <string>

#include "device_common.cuh"
#include "dispatch.cuh"
#include "kernels.h"

namespace sightline::allreduce {
namespace {

template <typename T, int K>
__global__ void __launch_bounds__(kElemThreads)
    OneShotPushKernel(const __grid_constant__ DeviceComm c, const uint4* __restrict__ in,
                      uint4* __restrict__ out, int64_t nvec) {
  const uint64_t call = BeginCall(c);
  const int parity = call & 1;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Each block pushes exactly the vectors that the same block on every peer will reduce.
  for (int64_t i = first; i < nvec; i += stride) PushToPeers<K>(c, parity, i, in[i]);
  PeerBarrier(c, FlagValue(call, 1));
  for (int64_t i = first; i < nvec; i += stride) {
    out[i] = SumOverRanks<T, K>(c, in[i], [&](int p) {
      return reinterpret_cast<const uint4*>(SlotOf(c, c.rank, parity, p)) + i;
    });
  }
}

template <typename T, int K>
__global__ void __launch_bounds__(kElemThreads)
    OneShotPullKernel(const __grid_constant__ DeviceComm c, const uint4* __restrict__ in,
                      uint4* __restrict__ out, int64_t nvec) {
  const uint64_t call = BeginCall(c);
  const int parity = call & 1;
  uint4* stage = reinterpret_cast<uint4*>(StageOf(c, c.rank, parity));
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < nvec; i += stride) stage[i] = in[i];
  PeerBarrier(c, FlagValue(call, 1));
  for (int64_t i = first; i < nvec; i += stride) {
    out[i] = SumOverRanks<T, K>(
        c, in[i], [&](int p) { return reinterpret_cast<const uint4*>(StageOf(c, p, parity)) + i; });
  }
}

}  // namespace

std::string OneShotLimit(const DeviceComm& c, Dtype d, int64_t count) {
  const int64_t bytes = count * DtypeBytes(d);
  if (bytes % 16 != 0) return "size is not a multiple of 16 bytes";
  if (bytes > c.cap_bytes) return "size exceeds the staging buffer";
  return "";
}

cudaError_t LaunchOneShot(const DeviceComm& c, Dtype d, const void* in, void* out, int64_t count,
                          int max_blocks, cudaStream_t stream) {
  const int64_t nvec = count * DtypeBytes(d) / 16;
  const int blocks = BlocksFor(nvec, kElemThreads, max_blocks);
  return DispatchTypeAndRanks(d, c.world, [&](auto t, auto k) {
    using T = decltype(t);
    constexpr int kK = decltype(k)::value;
    const uint4* vin = static_cast<const uint4*>(in);
    uint4* vout = static_cast<uint4*>(out);
    if (c.push) {
      OneShotPushKernel<T, kK><<<blocks, kElemThreads, 0, stream>>>(c, vin, vout, nvec);
    } else {
      OneShotPullKernel<T, kK><<<blocks, kElemThreads, 0, stream>>>(c, vin, vout, nvec);
    }
    return cudaGetLastError();
  });
}

}  // namespace sightline::allreduce
