// Test data and result checks for the harness: inputs are small integers (-2..2, zeros of odd
// ranks as -0), so every all-reduce sum is exact in bf16, fp16 and fp32 and the check can demand
// exact equality; the fused epilogue is checked against the same formula computed here, within a
// few units in the last place. Each check also hashes the output bits (order-independent) so that
// ranks can compare.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels.h"
#include "rmsnorm_epilogue.cuh"

namespace sightline::allreduce {
namespace {

__device__ inline uint32_t Mix(uint64_t i) {
  uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ static_cast<uint32_t>(i >> 32) * 40503u;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  x *= 0x297a2d39u;
  x ^= x >> 15;
  return x;
}
// Odd ranks send their zeros as -0: the Lamport kernel's "not yet written" sentinel, which it must
// canonicalise (a kernel that did not would wait for them forever). The sums do not change.
__device__ inline float XValue(int64_t i, int rank, uint32_t seed) {
  const int v = static_cast<int>((Mix(i ^ (uint64_t{seed} << 40)) + 3u * rank) % 5u) - 2;
  return v == 0 && rank % 2 == 1 ? -0.0f : static_cast<float>(v);
}
__device__ inline float XSum(int64_t i, int world, uint32_t seed) {
  float s = 0.f;
  for (int r = 0; r < world; ++r) s += XValue(i, r, seed);
  return s;
}
__device__ inline float ResidualValue(int64_t i) {
  return static_cast<float>(static_cast<int>(Mix(i + 0x5bd1e995ull) % 7u) - 3);
}
// Narrow: 0.5 .. 1.25. Wide (the quantizing fusions): (1 + (h % 4) / 4) x 2^e with e stepping by 5
// (mod 20) every 16 elements over -14 .. 5, so that one NVFP4 block shares an exponent and the
// blocks of a row span the formats' range; exact in bf16 and fp16 (2^-14 is fp16's smallest
// normal).
__device__ inline float GammaValue(int64_t h, bool wide) {
  const float m = static_cast<float>(h % 4);
  if (!wide) return 0.5f + 0.25f * m;
  return ldexpf(1.0f + 0.25f * m, static_cast<int>((h / 16 * 5) % 20) - 14);
}

template <typename T>
__device__ inline T FromFloat(float f) {
  return static_cast<T>(f);
}
template <>
__device__ inline __nv_bfloat16 FromFloat(float f) {
  return __float2bfloat16_rn(f);
}
template <>
__device__ inline __half FromFloat(float f) {
  return __float2half_rn(f);
}
__device__ inline float ToFloat(float v) { return v; }
__device__ inline float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float ToFloat(__half v) { return __half2float(v); }
__device__ inline uint32_t Bits(float v) { return __float_as_uint(v); }
__device__ inline uint32_t Bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
__device__ inline uint32_t Bits(__half v) { return __half_as_ushort(v); }

__device__ inline unsigned long long HashTerm(int64_t i, uint32_t bits) {
  return (static_cast<unsigned long long>(bits) + 1ull) *
         (static_cast<unsigned long long>(i) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull);
}

template <typename T>
__global__ void FillInputKernel(T* x, int64_t count, int rank, uint32_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] = FromFloat<T>(XValue(i, rank, seed));
}

template <typename T>
__global__ void FillResidualGammaKernel(T* residual, T* gamma, int64_t tokens, int64_t hidden,
                                        bool wide) {
  const int64_t n = tokens * hidden;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    residual[i] = FromFloat<T>(ResidualValue(i));
    if (i < hidden) gamma[i] = FromFloat<T>(GammaValue(i, wide));
  }
}

__device__ inline void Report(CheckResult* r, int64_t i, float got, float want) {
  if (atomicAdd(&r->mismatches, 1ull) == 0) {
    r->first_bad = static_cast<unsigned long long>(i);
    r->got = got;
    r->want = want;
  }
}

__device__ inline void AddHash(CheckResult* r, unsigned long long h) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) h += __shfl_xor_sync(0xffffffffu, h, o);
  if (threadIdx.x % 32 == 0) atomicAdd(&r->hash, h);
}

template <typename T>
__global__ void CheckSumKernel(const T* out, int64_t count, int world, uint32_t seed,
                               CheckResult* r) {
  unsigned long long h = 0;
  // Every thread runs the same number of iterations so that the warp shuffle in AddHash is safe.
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t base = 0; base < count; base += stride) {
    const int64_t i = base + first;
    if (i < count) {
      const T v = out[i];
      const float want = XSum(i, world, seed);
      if (ToFloat(v) != want) Report(r, i, ToFloat(v), want);
      h += HashTerm(i, Bits(v));
    }
  }
  AddHash(r, h);
}

template <typename T>
__global__ void CheckFusedKernel(const T* out, const T* residual_out, int64_t tokens,
                                 int64_t hidden, float eps, bool wide, int world, uint32_t seed,
                                 float rtol, CheckResult* r) {
  for (int64_t row = blockIdx.x; row < tokens; row += gridDim.x) {
    float ss = 0.f;
    unsigned long long h = 0;
    for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x) {
      const int64_t i = row * hidden + k;
      const float want = ToFloat(FromFloat<T>(XSum(i, world, seed) + ResidualValue(i)));
      const T got = residual_out[i];
      if (ToFloat(got) != want) Report(r, i, ToFloat(got), want);
      h += HashTerm(i, Bits(got)) * 3ull;
      ss += want * want;  // exact: small integers
    }
    const float scale = rsqrtf(BlockSum(ss) / static_cast<float>(hidden) + eps);
    for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x) {
      const int64_t i = row * hidden + k;
      const float res = ToFloat(FromFloat<T>(XSum(i, world, seed) + ResidualValue(i)));
      const float want = ToFloat(FromFloat<T>(res * scale * GammaValue(k, wide)));
      const float got = ToFloat(out[i]);
      if (!(fabsf(got - want) <= rtol * fabsf(want) + 1e-6f)) Report(r, i, got, want);
      h += HashTerm(i, Bits(out[i]));
    }
    AddHash(r, h);
  }
}

__global__ void HashWordsKernel(const uint32_t* words, int64_t n, CheckResult* r) {
  unsigned long long h = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t base = 0; base < n; base += stride) {
    const int64_t i = base + first;
    if (i < n) h += HashTerm(i, words[i]);
  }
  AddHash(r, h);
}

int GridFor(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  return static_cast<int>(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

}  // namespace

cudaError_t LaunchFillInput(Dtype d, void* x, int64_t count, int rank, uint32_t seed,
                            cudaStream_t stream) {
  const int g = GridFor(count, 256);
  switch (d) {
    case Dtype::kBf16:
      FillInputKernel<<<g, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(x), count, rank, seed);
      break;
    case Dtype::kFp16:
      FillInputKernel<<<g, 256, 0, stream>>>(static_cast<__half*>(x), count, rank, seed);
      break;
    case Dtype::kFp32:
      FillInputKernel<<<g, 256, 0, stream>>>(static_cast<float*>(x), count, rank, seed);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchFillResidualGamma(Dtype d, void* residual, void* gamma, int64_t tokens,
                                    int64_t hidden, bool wide_gamma, cudaStream_t stream) {
  const int g = GridFor(tokens * hidden, 256);
  switch (d) {
    case Dtype::kBf16:
      FillResidualGammaKernel<<<g, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(residual),
                                                     static_cast<__nv_bfloat16*>(gamma), tokens,
                                                     hidden, wide_gamma);
      break;
    case Dtype::kFp16:
      FillResidualGammaKernel<<<g, 256, 0, stream>>>(
          static_cast<__half*>(residual), static_cast<__half*>(gamma), tokens, hidden, wide_gamma);
      break;
    case Dtype::kFp32:
      FillResidualGammaKernel<<<g, 256, 0, stream>>>(
          static_cast<float*>(residual), static_cast<float*>(gamma), tokens, hidden, wide_gamma);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchCheckSum(Dtype d, const void* out, int64_t count, int world, uint32_t seed,
                           CheckResult* result, cudaStream_t stream) {
  const int g = GridFor(count, 256);
  switch (d) {
    case Dtype::kBf16:
      CheckSumKernel<<<g, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(out), count, world,
                                            seed, result);
      break;
    case Dtype::kFp16:
      CheckSumKernel<<<g, 256, 0, stream>>>(static_cast<const __half*>(out), count, world, seed,
                                            result);
      break;
    case Dtype::kFp32:
      CheckSumKernel<<<g, 256, 0, stream>>>(static_cast<const float*>(out), count, world, seed,
                                            result);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchCheckFused(Dtype d, const FusedArgs& a, bool wide_gamma, int world, uint32_t seed,
                             CheckResult* result, cudaStream_t stream) {
  const int g = static_cast<int>(a.tokens < 4096 ? a.tokens : 4096);
  switch (d) {
    case Dtype::kBf16:
      CheckFusedKernel<<<g, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(a.out),
                                              static_cast<const __nv_bfloat16*>(a.residual_out),
                                              a.tokens, a.hidden, a.eps, wide_gamma, world, seed,
                                              1.f / 64, result);
      break;
    case Dtype::kFp16:
      CheckFusedKernel<<<g, 256, 0, stream>>>(
          static_cast<const __half*>(a.out), static_cast<const __half*>(a.residual_out), a.tokens,
          a.hidden, a.eps, wide_gamma, world, seed, 1.f / 512, result);
      break;
    case Dtype::kFp32:
      CheckFusedKernel<<<g, 256, 0, stream>>>(
          static_cast<const float*>(a.out), static_cast<const float*>(a.residual_out), a.tokens,
          a.hidden, a.eps, wide_gamma, world, seed, 1e-5f, result);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchHashBytes(const void* data, int64_t bytes, CheckResult* result,
                            cudaStream_t stream) {
  const int64_t n = bytes / 4;
  HashWordsKernel<<<GridFor(n, 256), 256, 0, stream>>>(static_cast<const uint32_t*>(data), n,
                                                       result);
  return cudaGetLastError();
}

}  // namespace sightline::allreduce
