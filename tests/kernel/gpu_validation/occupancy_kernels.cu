// A family of kernels with different register and shared-memory footprints. Compiled once per
// -maxrregcount value with -DVARIANT_TAG=rN (build.sh); each copy lives in its own namespace and
// registers its kernels through RegisterKernels_rN. Register pressure comes from kAcc live
// accumulators; __launch_bounds__ variants cap registers further; static arrays add static shared
// memory. The values that matter are read back with cudaFuncGetAttributes, not assumed.
#include <cuda_runtime.h>

#include "kernel_variants.h"

#ifndef VARIANT_TAG
#error "compile with -DVARIANT_TAG=rN"
#endif
#define SL_CAT2(a, b) a##b
#define SL_CAT(a, b) SL_CAT2(a, b)
#define SL_STR2(a) #a
#define SL_STR(a) SL_STR2(a)

namespace SL_CAT(variant_, VARIANT_TAG) {

  __device__ float g_in[256];
  __device__ float g_out[1 << 16];

  template <int kAcc>
  __device__ __forceinline__ float Body(int iters, float* smem, int smem_floats) {
    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = g_in[(threadIdx.x + i) & 255];
    for (int it = 0; it < iters; ++it) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) {
        acc[i] = fmaf(acc[i], acc[(i + 1) % kAcc], acc[(i + 7) % kAcc]);
      }
    }
    float s = 0;
#pragma unroll
    for (int i = 0; i < kAcc; ++i) s += acc[i] * static_cast<float>(i + 1);
    if (smem_floats > 0) {
      smem[threadIdx.x % smem_floats] = s;
      __syncthreads();
      s += smem[(threadIdx.x + 1) % smem_floats];
    }
    return s;
  }

  __device__ __forceinline__ void Store(float s) {
    g_out[(blockIdx.x * blockDim.x + threadIdx.x) & ((1 << 16) - 1)] = s;
  }

  template <int kAcc>
  __global__ void Plain(int iters, int smem_floats) {
    extern __shared__ float dyn[];
    Store(Body<kAcc>(iters, dyn, smem_floats));
  }

  template <int kAcc, int kMaxThreads, int kMinBlocks>
  __global__ void __launch_bounds__(kMaxThreads, kMinBlocks) Bounded(int iters, int smem_floats) {
    extern __shared__ float dyn[];
    Store(Body<kAcc>(iters, dyn, smem_floats));
  }

  template <int kAcc, int kStaticFloats>
  __global__ void WithStatic(int iters, int smem_floats) {
    __shared__ float st[kStaticFloats];
    extern __shared__ float dyn[];
    st[threadIdx.x % kStaticFloats] = static_cast<float>(threadIdx.x);
    __syncthreads();
    float s = Body<kAcc>(iters, dyn, smem_floats) + st[(threadIdx.x * 7) % kStaticFloats];
    Store(s);
  }

}  // namespace )

#define SL_NS SL_CAT(variant_, VARIANT_TAG)
#define SL_ADD(label, ...)                                                                      \
  out.push_back(                                                                                \
      KernelVariant{std::string(SL_STR(VARIANT_TAG)) + "/" + label,                             \
                    (const void*)&SL_NS::__VA_ARGS__, +[](int grid, int block, size_t smem) {   \
                      SL_NS::__VA_ARGS__<<<grid, block, smem>>>(1, static_cast<int>(smem / 4)); \
                    }})

void SL_CAT(RegisterKernels_, VARIANT_TAG)(std::vector<KernelVariant>& out) {
  SL_ADD("acc4", Plain<4>);
  SL_ADD("acc16", Plain<16>);
  SL_ADD("acc32", Plain<32>);
  SL_ADD("acc64", Plain<64>);
  SL_ADD("acc96", Plain<96>);
  SL_ADD("acc128", Plain<128>);
  SL_ADD("acc200", Plain<200>);
  SL_ADD("acc128_lb256x2", Bounded<128, 256, 2>);
  SL_ADD("acc128_lb128x4", Bounded<128, 128, 4>);
  SL_ADD("acc64_lb512x2", Bounded<64, 512, 2>);
  SL_ADD("acc200_lb384x1", Bounded<200, 384, 1>);
  SL_ADD("acc96_lb1024x1", Bounded<96, 1024, 1>);
  SL_ADD("acc200_lb640x1", Bounded<200, 640, 1>);
  SL_ADD("acc128_lb96x6", Bounded<128, 96, 6>);
  SL_ADD("acc48_lb192x5", Bounded<48, 192, 5>);
  SL_ADD("acc16_st1k", WithStatic<16, 256>);
  SL_ADD("acc64_st8k", WithStatic<64, 2048>);
  SL_ADD("acc32_st23k", WithStatic<32, 6000>);
  SL_ADD("acc128_st48k", WithStatic<128, 12288>);
}
