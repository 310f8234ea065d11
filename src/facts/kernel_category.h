// Kernel categories: what a GPU kernel does (GEMM, attention, normalization, ...), decided from its
// name alone by the documented rules in docs/analyses/kernel_categories.md. Used by kernel_summary
// and by findings that reason about kernel mixes. Pure functions on strings; no trace needed.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace sightline {

enum class KernelCategory : uint8_t {
  kGemm,           // matrix multiply and convolution: cuBLAS, cuBLASLt, nvjet, CUTLASS, xmma, gemv
  kAttention,      // fused attention and KV-cache kernels: FlashAttention, FlashInfer, cuDNN SDPA
  kNormalization,  // LayerNorm, RMSNorm, GroupNorm, BatchNorm (also fused with residual add)
  kElementwise,    // pointwise arithmetic, activations, RoPE, casts, random numbers
  kReduction,      // reductions, softmax, scans, top-k
  kCommunication,  // NCCL and custom collectives (all-reduce, all-gather, ...)
  kCopyMemset,     // data movement on the GPU: copies, fills, cat, transpose, gather/scatter/index
  kQuantization,   // (de)quantization to/from FP8, FP4, INT8
  kCudaGraph,      // a CUDA graph run traced as a whole (WholeGraphName): its kernels are unknown
  kOther,          // none of the rules matched
};
inline constexpr int kNumKernelCategories = 10;

// "GEMM", "attention", "normalization", "elementwise", "reduction", "communication",
// "copy/memset", "quantization", "CUDA graph", "other".
const char* KernelCategoryName(KernelCategory category);

// The category of a kernel from its full (demangled) name; also accepts short names.
// Cost: a few substring searches; call it once per distinct name, not once per kernel.
KernelCategory ClassifyKernel(std::string_view name);

// The operations a TensorRT Myelin kernel fuses, decoded from its name:
// "__myl_AddCastMulMeanAddSqrtDivMulCastMul_0x1f.." -> {add, cast, mul, mean, add, sqrt, div, mul,
// cast, mul}. Abbreviations that are not known come back unchanged. Empty for non-Myelin names.
std::vector<std::string_view> DecodeMyelinOps(std::string_view name);

}  // namespace sightline
