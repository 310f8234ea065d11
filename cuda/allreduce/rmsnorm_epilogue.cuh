// The residual-add + RMSNorm epilogue, shared by the fused kernels and the unfused reference kernel
// so that both round the same way: residual_out = T(s + residual);
// out = T(residual_out * rsqrt(mean(residual_out^2) + eps) * gamma).
// A block of kRowBlockThreads threads works on several rows at once (row_group.cuh). With a
// quantizing fusion (Q, quant_epilogue.cuh) the row T(...) is quantized too, and `out` (the
// normalized row in T, TensorRT-LLM's "norm out") is written only when it is not null.
#pragma once

#include "device_common.cuh"
#include "quant_epilogue.cuh"
#include "row_group.cuh"

namespace sightline::allreduce {

// s[j] holds the all-reduced vector idx = g.lane + j * g.tpr of row `row` (for idx < hvec).
// Writes residual_out, out and the quantized row for the row when `active`; every thread of the
// block calls it.
template <typename T, Quant Q = Quant::kNone>
__device__ inline void ResidualRmsNormRow(const uint4 (&s)[kRowMaxVecPerThread], bool active,
                                          int64_t row, const RowGroup& g, int64_t hvec,
                                          int64_t hidden, float eps,
                                          const uint4* __restrict__ residual,
                                          const uint4* __restrict__ gamma, uint4* __restrict__ out,
                                          uint4* __restrict__ residual_out,
                                          const QuantArgs& q = QuantArgs{}) {
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
  uint4 normed[kRowMaxVecPerThread];
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
      normed[j] = VecTraits<T>::Pack(r[j]);
      if (Q == Quant::kNone || out != nullptr) out[row * hvec + idx] = normed[j];
    }
  }
  if constexpr (Q != Quant::kNone) QuantizeRow<T, Q>(normed, active, row, g, hvec, hidden, q);
}

}  // namespace sightline::allreduce
