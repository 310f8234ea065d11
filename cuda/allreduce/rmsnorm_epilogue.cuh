// The residual-add + RMSNorm epilogue, shared by the fused kernels and the unfused reference kernel
// so that both round the same way: residual_out = T(s + residual);
// out = T(residual_out * rsqrt(mean(residual_out^2) + eps) * gamma).
// A block of kRowBlockThreads threads works on several rows at once: each row gets a group of
// RowThreads(vectors per row) threads (a power of two), so short rows do not leave threads idle.
#pragma once

#include "device_common.cuh"

namespace sightline::allreduce {

inline constexpr int kRowBlockThreads = 512;
inline constexpr int kRowMaxVecPerThread = 4;  // rows up to 2048 16-byte vectors

inline int RowThreads(int64_t hvec) {
  int t = 1;
  while (t < hvec && t < kRowBlockThreads) t *= 2;
  return t;
}

struct RowGroup {
  int tpr;     // threads per row
  int lane;    // this thread's index in its row's group
  int group;   // the group's index in the block
  int groups;  // groups (rows at a time) per block
};
__device__ inline RowGroup MakeRowGroup(int tpr) {
  return RowGroup{tpr, static_cast<int>(threadIdx.x) % tpr, static_cast<int>(threadIdx.x) / tpr,
                  static_cast<int>(blockDim.x) / tpr};
}

// The sum of v over the thread's row group. Every thread of the block calls it (uniform control
// flow), also threads whose row is past the end (with v = 0).
__device__ inline float GroupSum(float v, const RowGroup& g) {
  __shared__ float warp_sums[32];
  if (g.tpr <= 32) {
    for (int o = g.tpr / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // warp_sums may still be read for the previous row
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  const int wpg = g.tpr / 32;
  float total = 0.f;
  for (int w = g.group * wpg; w < (g.group + 1) * wpg; ++w) total += warp_sums[w];
  return total;
}

// The sum of v over the whole block (used by the checker, one row per block).
__device__ inline float BlockSum(float v) {
  return GroupSum(v, RowGroup{static_cast<int>(blockDim.x), static_cast<int>(threadIdx.x), 0, 1});
}

// s[j] holds the all-reduced vector idx = g.lane + j * g.tpr of row `row` (for idx < hvec).
// Writes residual_out and out for the row when `active`; every thread of the block calls it.
template <typename T>
__device__ inline void ResidualRmsNormRow(const uint4 (&s)[kRowMaxVecPerThread], bool active,
                                          int64_t row, const RowGroup& g, int64_t hvec,
                                          int64_t hidden, float eps,
                                          const uint4* __restrict__ residual,
                                          const uint4* __restrict__ gamma, uint4* __restrict__ out,
                                          uint4* __restrict__ residual_out) {
  constexpr int kN = VecTraits<T>::kN;
  float r[kRowMaxVecPerThread][kN];
  float ss = 0.f;
#pragma unroll
  for (int j = 0; j < kRowMaxVecPerThread; ++j) {
    const int64_t idx = g.lane + static_cast<int64_t>(j) * g.tpr;
    if (active && idx < hvec) {
#pragma unroll
      for (int e = 0; e < kN; ++e) r[j][e] = 0.f;
      VecTraits<T>::Add(r[j], s[j]);
      VecTraits<T>::Add(r[j], residual[row * hvec + idx]);
      const uint4 packed = VecTraits<T>::Pack(r[j]);
      residual_out[row * hvec + idx] = packed;
#pragma unroll
      for (int e = 0; e < kN; ++e) r[j][e] = 0.f;
      VecTraits<T>::Add(r[j], packed);  // continue from the rounded residual
#pragma unroll
      for (int e = 0; e < kN; ++e) ss += r[j][e] * r[j][e];
    }
  }
  const float scale = rsqrtf(GroupSum(ss, g) / static_cast<float>(hidden) + eps);
#pragma unroll
  for (int j = 0; j < kRowMaxVecPerThread; ++j) {
    const int64_t idx = g.lane + static_cast<int64_t>(j) * g.tpr;
    if (active && idx < hvec) {
      float w[kN];
#pragma unroll
      for (int e = 0; e < kN; ++e) w[e] = 0.f;
      VecTraits<T>::Add(w, gamma[idx]);
#pragma unroll
      for (int e = 0; e < kN; ++e) r[j][e] = r[j][e] * scale * w[e];
      out[row * hvec + idx] = VecTraits<T>::Pack(r[j]);
    }
  }
}

}  // namespace sightline::allreduce
