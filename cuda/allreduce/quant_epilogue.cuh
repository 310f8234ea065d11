// The quantizing tails of the residual-add + RMSNorm epilogue (rmsnorm_epilogue.cuh), shared by the
// fused kernels and the unfused reference kernel: FP8 E4M3 with a per-tensor scale, FP8 with
// per-token dynamic scales, and NVFP4 (E2M1 in blocks of 16, E4M3 block scales in the 128x4
// swizzled layout, a global FP32 scale), as TensorRT-LLM's RESIDUAL_RMS_NORM_QUANT_FP8 and
// RESIDUAL_RMS_NORM_QUANT_NVFP4 fusions lay them out. The input of the quantizer is the normalized
// row rounded to the dtype (what the plain epilogue writes as `out`), so the harness can check the
// bytes bit for bit against the CPU reference (src/shared/quant_format.h) on that row.
// Every scale step is one IEEE operation (__fmul_rn, __frcp_rn, __fdiv_rn: no contraction, no
// approximate reciprocal), the same sequence as the CPU reference. E4M3 uses CUDA's conversion
// (cvt.rn.satfinite.e4m3x2.f32 on Hopper); E2M1 has no instruction before Blackwell, so it is
// computed here from the rounding midpoints (E2M1Code), independently of the CPU reference's
// bit-level rounding.
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "device_common.cuh"
#include "e2m1_code.h"
#include "kernels.h"
#include "row_group.cuh"

namespace sightline::allreduce {

inline constexpr float kE4M3Max = 448.0f;
inline constexpr float kPerTokenMinAmax = 1e-6f;  // quant::kPerTokenMinAmax
inline constexpr float kRcp6 = 1.0f / 6.0f;       // quant::kRcp6

__device__ inline uint32_t E4M3Bits(float x) {
  return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
}
// Two values at once (one cvt.rn.satfinite.e4m3x2.f32): a in the low byte, b in the high one.
__device__ inline uint32_t E4M3PairBits(float a, float b) {
  return __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
}
__device__ inline float E4M3Value(uint32_t bits) {
  return __half2float(
      __half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(bits), __NV_E4M3)));
}

// The byte offset of block scale (row, block) in the swizzled layout: quant::Nvfp4ScaleOffset.
__device__ inline int64_t SwizzledScaleOffset(int64_t row, int64_t block, int64_t hidden) {
  const int64_t col_tiles = (hidden / 16 + 3) / 4;
  return (row / 128) * (col_tiles * 512) + (block / 4) * 512 + (row % 32) * 16 +
         (row % 128 / 32) * 4 + block % 4;
}

// The 16-byte vector v of dtype T as floats (exact).
template <typename T>
__device__ inline void Widen(const uint4& v, float (&f)[VecTraits<T>::kN]) {
#pragma unroll
  for (int e = 0; e < VecTraits<T>::kN; ++e) f[e] = 0.f;
  VecTraits<T>::Add(f, v);
}

// Quantizes one row. v[j] holds the row's normalized vector idx = g.lane + j * g.tpr in dtype T
// (for idx < hvec). Every thread of the block calls it (uniform control flow: GroupMax and the
// shuffles between the threads of an NVFP4 block). Vectors are widened one at a time, which keeps
// the fused kernels within their registers.
template <typename T, Quant Q>
__device__ inline void QuantizeRow(const uint4 (&v)[kRowMaxVecPerThread], bool active, int64_t row,
                                   const RowGroup& g, int64_t hvec, int64_t hidden,
                                   const QuantArgs& q) {
  constexpr int kN = VecTraits<T>::kN;
  auto valid = [&](int j) { return active && g.lane + static_cast<int64_t>(j) * g.tpr < hvec; };
  if constexpr (Q == Quant::kFp8 || Q == Quant::kFp8PerToken) {
    float inv;
    if constexpr (Q == Quant::kFp8) {
      inv = __frcp_rn(__ldg(q.scale_in));
    } else {
      float m = 0.f;
#pragma unroll
      for (int j = 0; j < kRowMaxVecPerThread; ++j) {
        if (!valid(j)) continue;
        float f[kN];
        Widen<T>(v[j], f);
#pragma unroll
        for (int e = 0; e < kN; ++e) m = fmaxf(m, fabsf(f[e]));
      }
      const float amax = fmaxf(kPerTokenMinAmax, GroupMax(m, g));
      inv = __fdiv_rn(kE4M3Max, amax);
      if (active && g.lane == 0) static_cast<float*>(q.scales)[row] = __fdiv_rn(amax, kE4M3Max);
    }
#pragma unroll
    for (int j = 0; j < kRowMaxVecPerThread; ++j) {
      if (!valid(j)) continue;
      const int64_t idx = g.lane + static_cast<int64_t>(j) * g.tpr;
      float f[kN];
      Widen<T>(v[j], f);
      uint32_t w[kN / 4];
#pragma unroll
      for (int i = 0; i < kN / 4; ++i) {
        const float* x = f + 4 * i;
        w[i] = E4M3PairBits(__fmul_rn(x[0], inv), __fmul_rn(x[1], inv)) |
               E4M3PairBits(__fmul_rn(x[2], inv), __fmul_rn(x[3], inv)) << 16;
      }
      uint8_t* dst = static_cast<uint8_t*>(q.values) + row * hidden + idx * kN;
      if constexpr (kN == 8) {
        *reinterpret_cast<uint2*>(dst) = make_uint2(w[0], w[1]);
      } else {
        *reinterpret_cast<uint32_t*>(dst) = w[0];
      }
    }
  } else if constexpr (Q == Quant::kNvfp4) {
    constexpr int kVecPerBlock = 16 / kN;  // threads (lanes next to each other) per block
    const float gs = __ldg(q.scale_in);
    const float rcp_gs = __frcp_rn(gs);
#pragma unroll
    for (int j = 0; j < kRowMaxVecPerThread; ++j) {
      const int64_t idx = g.lane + static_cast<int64_t>(j) * g.tpr;
      float f[kN];
      if (valid(j)) {
        Widen<T>(v[j], f);
      } else {
#pragma unroll
        for (int e = 0; e < kN; ++e) f[e] = 0.f;
      }
      float m = 0.f;
#pragma unroll
      for (int e = 0; e < kN; ++e) m = fmaxf(m, fabsf(f[e]));
      // The block's other vectors sit in the neighbouring lanes (tpr is a multiple of
      // kVecPerBlock, and hvec too, so a block is whole or absent).
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
      if constexpr (kVecPerBlock == 4) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
      if (!valid(j)) continue;
      const uint32_t sf = E4M3Bits(__fmul_rn(gs, __fmul_rn(m, kRcp6)));
      const float stored = E4M3Value(sf);
      const float out_scale = stored != 0.f ? __frcp_rn(__fmul_rn(stored, rcp_gs)) : 0.f;
      uint32_t packed = 0;
#pragma unroll
      for (int e = 0; e < kN; ++e) packed |= E2M1Code(__fmul_rn(f[e], out_scale)) << (4 * e);
      uint8_t* dst = static_cast<uint8_t*>(q.values) + (row * hidden + idx * kN) / 2;
      if constexpr (kN == 8) {
        *reinterpret_cast<uint32_t*>(dst) = packed;
      } else {
        *reinterpret_cast<uint16_t*>(dst) = static_cast<uint16_t>(packed);
      }
      if (idx % kVecPerBlock == 0) {
        static_cast<uint8_t*>(q.scales)[SwizzledScaleOffset(row, idx / kVecPerBlock, hidden)] =
            static_cast<uint8_t>(sf);
      }
    }
  }
}

}  // namespace sightline::allreduce
