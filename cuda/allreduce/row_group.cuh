// How the row kernels (fused_rmsnorm.cu, the epilogues) share a block between rows: each row gets
// a group of RowThreads(vectors per row) threads (a power of two), so short rows do not leave
// threads idle; sums and maxima over a row's group.
#pragma once

#include <cstdint>

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

// op(v) over the thread's row group, combined in a fixed order (butterfly within a warp, then
// warps in order), so every rank gets the same bits. Every thread of the block calls it (uniform
// control flow), also threads whose row is past the end (with a neutral v). Each Op has its own
// shared array.
template <typename Op>
__device__ inline float GroupReduce(float v, const RowGroup& g, Op op) {
  __shared__ float warp_vals[32];
  if (g.tpr <= 32) {
    for (int o = g.tpr / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // warp_vals may still be read for the previous row
  if (lane == 0) warp_vals[warp] = v;
  __syncthreads();
  const int wpg = g.tpr / 32;
  float total = warp_vals[g.group * wpg];
  for (int w = g.group * wpg + 1; w < (g.group + 1) * wpg; ++w) total = op(total, warp_vals[w]);
  return total;
}

struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// The sum of v over the thread's row group (v = 0 for threads without a row).
__device__ inline float GroupSum(float v, const RowGroup& g) { return GroupReduce(v, g, AddOp{}); }
// The maximum of v over the thread's row group (v = 0, or any value <= the row's, without a row).
__device__ inline float GroupMax(float v, const RowGroup& g) { return GroupReduce(v, g, MaxOp{}); }

// The sum of v over the whole block (used by the checker, one row per block).
__device__ inline float BlockSum(float v) {
  return GroupSum(v, RowGroup{static_cast<int>(blockDim.x), static_cast<int>(threadIdx.x), 0, 1});
}

}  // namespace sightline::allreduce
