// Host entry points of the all-reduce kernels (one .cu file per algorithm) and of the helper
// kernels the harness uses to make inputs and check outputs. All launches are asynchronous on
// `stream` and return the launch's cudaError_t.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "comm.h"

namespace sightline::allreduce {

inline constexpr int kElemThreads = 512;  // threads per block of the element-wise kernels

// The quantization after the epilogue (quant_epilogue.cuh; docs/allreduce.md, "Quantizing
// epilogues"): none, FP8 E4M3 with a per-tensor scale, FP8 with per-token dynamic scales, NVFP4.
enum class Quant { kNone, kFp8, kFp8PerToken, kNvfp4 };

struct QuantArgs {
  // kFp8, kFp8PerToken: tokens x hidden E4M3 bytes; kNvfp4: tokens x hidden / 2 bytes, two E2M1
  // codes a byte, the lower element in the low nibble.
  void* values = nullptr;
  // kFp8PerToken: one float per token (amax / 448); kNvfp4: E4M3 block scales in the 128x4
  // swizzled layout (quant::Nvfp4ScaleBytes(tokens, hidden) bytes; pad entries untouched).
  void* scales = nullptr;
  // kFp8: the per-tensor dequantization scale (values = E4M3(x * (1 / scale))); kNvfp4: the
  // global encoding scale (448 * 6 / amax in TensorRT-LLM). A device pointer, read by the kernel.
  const float* scale_in = nullptr;
};

// Why a configuration does not fit a kernel, or "" when it does.
std::string OneShotLimit(const DeviceComm& c, Dtype d, int64_t count);
std::string TwoShotLimit(const DeviceComm& c, Dtype d, int64_t count);
std::string FusedLimit(const DeviceComm& c, Dtype d, int64_t tokens, int64_t hidden,
                       Quant quant = Quant::kNone);
std::string LamportLimit(const DeviceComm& c, Dtype d, int64_t count);

// out[i] = sum over ranks of in[i]; in and out are this rank's ordinary device buffers.
cudaError_t LaunchOneShot(const DeviceComm& c, Dtype d, const void* in, void* out, int64_t count,
                          int max_blocks, cudaStream_t stream);
cudaError_t LaunchTwoShot(const DeviceComm& c, Dtype d, const void* in, void* out, int64_t count,
                          int max_blocks, cudaStream_t stream);
// The Lamport one-shot (lamport.cu): no barrier, the data carries its own arrival flag. Needs the
// Lamport region filled with dtype d's sentinel by LaunchLamportReset on every rank, followed by a
// host barrier, before the first call and whenever the dtype changes; after that, calls need
// nothing from the host.
cudaError_t LaunchLamport(const DeviceComm& c, Dtype d, const void* in, void* out, int64_t count,
                          int max_blocks, cudaStream_t stream);
cudaError_t LaunchLamportReset(const DeviceComm& c, Dtype d, cudaStream_t stream);

// The decoder-layer epilogue: s = allreduce(x); residual_out = s + residual;
// out = residual_out * rsqrt(mean(residual_out^2) + eps) * gamma, per row of `hidden` elements;
// with quant != kNone, out rounded to the dtype is also quantized into `q`, and `out` may be null
// (not written: TensorRT-LLM's RESIDUAL_RMS_NORM_QUANT_* patterns) or not (its *_OUT_QUANT_*).
struct FusedArgs {
  const void* x = nullptr;
  const void* residual = nullptr;
  const void* gamma = nullptr;
  void* out = nullptr;
  void* residual_out = nullptr;
  int64_t tokens = 0;
  int64_t hidden = 0;
  float eps = 1e-6f;
  Quant quant = Quant::kNone;
  QuantArgs q;
};
cudaError_t LaunchFusedRmsNorm(const DeviceComm& c, Dtype d, bool two_shot, const FusedArgs& a,
                               int max_blocks, cudaStream_t stream);
// The unfused epilogue after a separate all-reduce: a.x holds the all-reduced sum.
cudaError_t LaunchResidualRmsNorm(Dtype d, const FusedArgs& a, cudaStream_t stream);

// Test data: small integers, so that every sum is exact in every dtype and any wrong, missing or
// stale element shows. Input x of `rank` for `seed`; residual and gamma are fixed functions.
// `wide_gamma` (the quantizing fusions) spreads gamma over 2^-14 .. 56 in steps that change every
// 16 elements, so that the quantized values and the NVFP4 block scales reach the formats'
// saturation, subnormals and zero.
cudaError_t LaunchFillInput(Dtype d, void* x, int64_t count, int rank, uint32_t seed,
                            cudaStream_t stream);
cudaError_t LaunchFillResidualGamma(Dtype d, void* residual, void* gamma, int64_t tokens,
                                    int64_t hidden, bool wide_gamma, cudaStream_t stream);

// Result of a check, written to device memory by the Check* kernels.
struct CheckResult {
  unsigned long long mismatches;
  unsigned long long first_bad;  // element index, valid when mismatches > 0
  float got, want;
  unsigned long long hash;  // order-independent hash of the checked output's bits
};
// The all-reduce output against the exact sum for (world, seed).
cudaError_t LaunchCheckSum(Dtype d, const void* out, int64_t count, int world, uint32_t seed,
                           CheckResult* result, cudaStream_t stream);
// The fused outputs against a reference computed from the formula (residual_out exact, out within
// a few units in the last place of the dtype). `result` gets out's hash; residual_out is folded in.
cudaError_t LaunchCheckFused(Dtype d, const FusedArgs& a, bool wide_gamma, int world, uint32_t seed,
                             CheckResult* result, cudaStream_t stream);
// Adds an order-independent hash of `bytes` bytes (a multiple of 4) to result->hash.
cudaError_t LaunchHashBytes(const void* data, int64_t bytes, CheckResult* result,
                            cudaStream_t stream);

}  // namespace sightline::allreduce
