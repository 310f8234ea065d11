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

// Why a configuration does not fit a kernel, or "" when it does.
std::string OneShotLimit(const DeviceComm& c, Dtype d, int64_t count);
std::string TwoShotLimit(const DeviceComm& c, Dtype d, int64_t count);
std::string FusedLimit(const DeviceComm& c, Dtype d, int64_t tokens, int64_t hidden);
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
// out = residual_out * rsqrt(mean(residual_out^2) + eps) * gamma, per row of `hidden` elements.
struct FusedArgs {
  const void* x = nullptr;
  const void* residual = nullptr;
  const void* gamma = nullptr;
  void* out = nullptr;
  void* residual_out = nullptr;
  int64_t tokens = 0;
  int64_t hidden = 0;
  float eps = 1e-6f;
};
cudaError_t LaunchFusedRmsNorm(const DeviceComm& c, Dtype d, bool two_shot, const FusedArgs& a,
                               int max_blocks, cudaStream_t stream);
// The unfused epilogue after a separate all-reduce: a.x holds the all-reduced sum.
cudaError_t LaunchResidualRmsNorm(Dtype d, const FusedArgs& a, cudaStream_t stream);

// Test data: small integers, so that every sum is exact in every dtype and any wrong, missing or
// stale element shows. Input x of `rank` for `seed`; residual and gamma are fixed functions.
cudaError_t LaunchFillInput(Dtype d, void* x, int64_t count, int rank, uint32_t seed,
                            cudaStream_t stream);
cudaError_t LaunchFillResidualGamma(Dtype d, void* residual, void* gamma, int64_t tokens,
                                    int64_t hidden, cudaStream_t stream);

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
cudaError_t LaunchCheckFused(Dtype d, const FusedArgs& a, int world, uint32_t seed,
                             CheckResult* result, cudaStream_t stream);

}  // namespace sightline::allreduce
