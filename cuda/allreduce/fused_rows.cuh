// The row kernels of the all-reduce fused with residual add + RMSNorm (the epilogue of attention
// and MLP in a decoder layer), in one kernel, with one-shot or two-shot data movement over whole
// rows:
// - one-shot: every rank sends its rows, one barrier, every rank sums each row over all ranks and
//   applies the epilogue itself;
// - two-shot: rows are split into `world` segments; each rank sums its segment, and after a second
//   barrier every rank has each row's sum from its owner and applies the epilogue to all rows. The
//   epilogue is deterministic, so outputs match on every rank.
// Push (default) and pull (--pull) move the data as in oneshot.cu and twoshot.cu, and two-shot
// visits the owners in the same order (PeerAt).
// Rows are handled whole, by groups of threads (rmsnorm_epilogue.cuh), up to
// kRowBlockThreads x kRowMaxVecPerThread 16-byte vectors long. The quantizing fusions (FP8, FP8
// per token, NVFP4: quant_epilogue.cuh) are the same kernels with the quantization appended to the
// epilogue (template argument Q).
// Included by fused_rmsnorm.cu (no quantization), fused_fp8.cu and fused_nvfp4.cu, each of which
// instantiates its own quantization kinds, so that the three compile in parallel.
#pragma once

#include <type_traits>

#include "device_common.cuh"
#include "dispatch.cuh"
#include "kernels.h"
#include "rmsnorm_epilogue.cuh"

namespace sightline::allreduce {

// Defined in fused_fp8.cu (kFp8, kFp8PerToken) and fused_nvfp4.cu (kNvfp4); fused_rmsnorm.cu's
// entry points dispatch to them.
cudaError_t LaunchFusedFp8(const DeviceComm& c, Dtype d, bool two_shot, const FusedArgs& a,
                           int max_blocks, cudaStream_t stream);
cudaError_t LaunchResidualFp8(Dtype d, const FusedArgs& a, cudaStream_t stream);
cudaError_t LaunchFusedNvfp4(const DeviceComm& c, Dtype d, bool two_shot, const FusedArgs& a,
                             int max_blocks, cudaStream_t stream);
cudaError_t LaunchResidualNvfp4(Dtype d, const FusedArgs& a, cudaStream_t stream);

namespace {

struct RowPtrs {
  const uint4* x;
  const uint4* residual;
  const uint4* gamma;
  uint4* out;
  uint4* residual_out;
  int64_t tokens, hvec, hidden;
  float eps;
  QuantArgs q;
};

__device__ inline int64_t RowSegBegin(int64_t tokens, int world, int s) {
  return tokens * s / world;
}

// Sums one row over ranks into s[]; src(p, i) points at rank p's contribution to vector i.
template <typename T, int K, typename SrcFn>
__device__ inline void SumRow(const DeviceComm& c, const RowPtrs& a, const RowGroup& g, int64_t row,
                              SrcFn src, uint4 (&s)[kRowMaxVecPerThread]) {
#pragma unroll
  for (int j = 0; j < kRowMaxVecPerThread; ++j) {
    const int64_t idx = g.lane + static_cast<int64_t>(j) * g.tpr;
    if (idx < a.hvec) {
      const int64_t i = row * a.hvec + idx;
      s[j] = SumOverRanks<T, K>(c, a.x[i], [&](int p) { return src(p, i); });
    }
  }
}

// Push: row into slot `rank` of `dst_rank` (-1: of every peer). Pull: row into own stage.
template <bool kPush, int K>
__device__ inline void SendRow(const DeviceComm& c, const RowPtrs& a, const RowGroup& g, int parity,
                               int64_t row, int dst_rank) {
  for (int64_t idx = g.lane; idx < a.hvec; idx += g.tpr) {
    const int64_t i = row * a.hvec + idx;
    const uint4 v = a.x[i];
    if (!kPush) {
      reinterpret_cast<uint4*>(StageOf(c, c.rank, parity))[i] = v;
    } else if (dst_rank >= 0) {
      reinterpret_cast<uint4*>(SlotOf(c, dst_rank, parity, c.rank))[i] = v;
    } else {
      PushToPeers<K>(c, parity, i, v);
    }
  }
}

template <bool kPush>
__device__ inline const uint4* Contribution(const DeviceComm& c, int parity, int p, int64_t i) {
  return reinterpret_cast<const uint4*>(kPush ? SlotOf(c, c.rank, parity, p)
                                              : StageOf(c, p, parity)) +
         i;
}

// Rows [begin, end) are dealt to (block, group) pairs: row = begin + (blockIdx.x + k gridDim.x) x
// groups + group. The loop runs the same number of times for every thread of a block (uniform
// control flow for the epilogue's reductions); `row < end` says whether a thread has a row.
#define SIGHTLINE_FOR_ROWS(row, begin, end, g)                                           \
  for (int64_t base_ = (begin) + static_cast<int64_t>(blockIdx.x) * (g).groups, row = 0; \
       row = base_ + (g).group, base_ < (end);                                           \
       base_ += static_cast<int64_t>(gridDim.x) * (g).groups)

template <typename T, int K, bool kPush, Quant Q>
__global__ void __launch_bounds__(kRowBlockThreads)
    FusedOneShotKernel(const __grid_constant__ DeviceComm c, RowPtrs a, int tpr) {
  const uint64_t call = BeginCall(c);
  const int parity = call & 1;
  const RowGroup g = MakeRowGroup(tpr);
  SIGHTLINE_FOR_ROWS(row, 0, a.tokens, g) {
    if (row < a.tokens) SendRow<kPush, K>(c, a, g, parity, row, -1);
  }
  PeerBarrier(c, FlagValue(call, 1));
  SIGHTLINE_FOR_ROWS(row, 0, a.tokens, g) {
    const bool active = row < a.tokens;
    uint4 s[kRowMaxVecPerThread];
    if (active) {
      SumRow<T, K>(
          c, a, g, row, [&](int p, int64_t i) { return Contribution<kPush>(c, parity, p, i); }, s);
    }
    ResidualRmsNormRow<T, Q>(s, active, row, g, a.hvec, a.hidden, a.eps, a.residual, a.gamma, a.out,
                             a.residual_out, a.q);
  }
}

template <typename T, int K, bool kPush, Quant Q>
__global__ void __launch_bounds__(kRowBlockThreads)
    FusedTwoShotKernel(const __grid_constant__ DeviceComm c, RowPtrs a, int tpr) {
  const uint64_t call = BeginCall(c);
  const int parity = call & 1;
  const RowGroup g = MakeRowGroup(tpr);
  for (int j = 0; j + 1 < c.world; ++j) {
    const int s = PeerAt(c, j);
    const int64_t e = RowSegBegin(a.tokens, c.world, s + 1);
    SIGHTLINE_FOR_ROWS(row, RowSegBegin(a.tokens, c.world, s), e, g) {
      if (row < e) SendRow<kPush, K>(c, a, g, parity, row, s);
    }
  }
  PeerBarrier(c, FlagValue(call, 1));
  {
    const int64_t e = RowSegBegin(a.tokens, c.world, c.rank + 1);
    SIGHTLINE_FOR_ROWS(row, RowSegBegin(a.tokens, c.world, c.rank), e, g) {
      if (row >= e) continue;
      uint4 s[kRowMaxVecPerThread];
      SumRow<T, K>(
          c, a, g, row, [&](int p, int64_t i) { return Contribution<kPush>(c, parity, p, i); }, s);
#pragma unroll
      for (int j = 0; j < kRowMaxVecPerThread; ++j) {
        const int64_t idx = g.lane + static_cast<int64_t>(j) * g.tpr;
        if (idx >= a.hvec) continue;
        const int64_t i = row * a.hvec + idx;
        // Push: the sum goes to every rank's result buffer; pull: to this rank's only.
#pragma unroll
        for (int p = 0; p < K; ++p) {
          if (p < c.world && (kPush || p == c.rank))
            reinterpret_cast<uint4*>(ResultOf(c, p, parity))[i] = s[j];
        }
      }
    }
  }
  PeerBarrier(c, FlagValue(call, 2));
  for (int j = 0; j < c.world; ++j) {
    const int s = RankAt(c, j);
    const uint4* src = reinterpret_cast<const uint4*>(ResultOf(c, kPush ? c.rank : s, parity));
    const int64_t e = RowSegBegin(a.tokens, c.world, s + 1);
    SIGHTLINE_FOR_ROWS(row, RowSegBegin(a.tokens, c.world, s), e, g) {
      const bool active = row < e;
      uint4 v[kRowMaxVecPerThread];
#pragma unroll
      for (int j = 0; j < kRowMaxVecPerThread; ++j) {
        const int64_t idx = g.lane + static_cast<int64_t>(j) * g.tpr;
        if (active && idx < a.hvec) v[j] = __ldcg(src + row * a.hvec + idx);
      }
      ResidualRmsNormRow<T, Q>(v, active, row, g, a.hvec, a.hidden, a.eps, a.residual, a.gamma,
                               a.out, a.residual_out, a.q);
    }
  }
}

RowPtrs ToRowPtrs(Dtype d, const FusedArgs& a) {
  return RowPtrs{static_cast<const uint4*>(a.x),
                 static_cast<const uint4*>(a.residual),
                 static_cast<const uint4*>(a.gamma),
                 static_cast<uint4*>(a.out),
                 static_cast<uint4*>(a.residual_out),
                 a.tokens,
                 a.hidden * DtypeBytes(d) / 16,
                 a.hidden,
                 a.eps,
                 a.q};
}

template <typename T, Quant Q>
__global__ void __launch_bounds__(kRowBlockThreads) ResidualRmsNormKernel(RowPtrs a, int tpr) {
  const RowGroup g = MakeRowGroup(tpr);
  SIGHTLINE_FOR_ROWS(row, 0, a.tokens, g) {
    const bool active = row < a.tokens;
    uint4 v[kRowMaxVecPerThread];
#pragma unroll
    for (int j = 0; j < kRowMaxVecPerThread; ++j) {
      const int64_t idx = g.lane + static_cast<int64_t>(j) * g.tpr;
      if (active && idx < a.hvec) v[j] = a.x[row * a.hvec + idx];
    }
    ResidualRmsNormRow<T, Q>(v, active, row, g, a.hvec, a.hidden, a.eps, a.residual, a.gamma, a.out,
                             a.residual_out, a.q);
  }
}

template <Quant kQ>
cudaError_t LaunchFusedRows(const DeviceComm& c, Dtype d, bool two_shot, const FusedArgs& fa,
                            int max_blocks, cudaStream_t stream) {
  const RowPtrs a = ToRowPtrs(d, fa);
  const int tpr = RowThreads(a.hvec);
  const int64_t rows = two_shot ? (a.tokens + c.world - 1) / c.world : a.tokens;
  const int blocks = BlocksFor(rows, kRowBlockThreads / tpr, max_blocks);
  return DispatchTypeAndRanks(d, c.world, [&](auto t, auto k) {
    using T = decltype(t);
    constexpr int kK = decltype(k)::value;
    if (two_shot && c.push) {
      FusedTwoShotKernel<T, kK, true, kQ><<<blocks, kRowBlockThreads, 0, stream>>>(c, a, tpr);
    } else if (two_shot) {
      FusedTwoShotKernel<T, kK, false, kQ><<<blocks, kRowBlockThreads, 0, stream>>>(c, a, tpr);
    } else if (c.push) {
      FusedOneShotKernel<T, kK, true, kQ><<<blocks, kRowBlockThreads, 0, stream>>>(c, a, tpr);
    } else {
      FusedOneShotKernel<T, kK, false, kQ><<<blocks, kRowBlockThreads, 0, stream>>>(c, a, tpr);
    }
    return cudaGetLastError();
  });
}

template <Quant kQ>
cudaError_t LaunchResidualRows(Dtype d, const FusedArgs& fa, cudaStream_t stream) {
  const RowPtrs a = ToRowPtrs(d, fa);
  const int tpr = RowThreads(a.hvec);
  const int64_t per_block = kRowBlockThreads / tpr;
  const int64_t want = (a.tokens + per_block - 1) / per_block;
  const int blocks = static_cast<int>(want < 65535 ? want : 65535);
  switch (d) {
    case Dtype::kBf16:
      ResidualRmsNormKernel<__nv_bfloat16, kQ><<<blocks, kRowBlockThreads, 0, stream>>>(a, tpr);
      break;
    case Dtype::kFp16:
      ResidualRmsNormKernel<__half, kQ><<<blocks, kRowBlockThreads, 0, stream>>>(a, tpr);
      break;
    case Dtype::kFp32:
      ResidualRmsNormKernel<float, kQ><<<blocks, kRowBlockThreads, 0, stream>>>(a, tpr);
      break;
  }
  return cudaGetLastError();
}

}  // namespace
}  // namespace sightline::allreduce
