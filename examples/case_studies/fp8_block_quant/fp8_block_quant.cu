// fp8_block_quant: the TensorRT-LLM talk's first kernel case study (issue 19). A "layer step" quantizes
// bf16 activations [tokens x hidden] to FP8 E4M3 with one fp32 scale per 1x128 block (DeepSeek-style
// scale_1x128), then runs an FP8 GEMM (cuBLASLt, E4M3 x E4M3 -> bf16, per-tensor scales of 1: Hopper's
// cuBLASLt has no 1x128 block-scale mode, so the block scales are computed and written but not applied
// by the GEMM; the timing is what the case study is about). Two quantization kernels:
//   naive:     grid = number of SMs, 256 threads; each warp walks 1x128 groups with a 4-iteration loop
//              whose every step loads one bf16 and uses it at once (long scoreboard), then a second
//              4-iteration pass reloads and quantizes.
//   optimized: grid = 8 x SMs; each lane loads its two __nv_bfloat162 pairs first (one loop of loads),
//              then computes (a second loop), keeps the values in registers, and stores FP8 pairs.
// Both are checked against a CPU reference (scales bit-exact, FP8 bytes exact), the GEMM against a CPU
// dot product of the FP8 values on sampled outputs. Timing: CUDA events after warm-up, medians.
// Each step is one NVTX range "step N" so `sightline analyze` finds the iterations.
// Usage: fp8_block_quant [--variant naive|opt|both] [--tokens M] [--hidden K] [--out-features N]
//                        [--iters I] [--warmup W] [--no-gemm]
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CUDA_CHECK(expr)                                                                       \
  do {                                                                                         \
    cudaError_t err_ = (expr);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "fp8_block_quant: %s failed: %s (%s:%d)\n", #expr,                  \
                   cudaGetErrorString(err_), __FILE__, __LINE__);                              \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)
#define LT_CHECK(expr)                                                                         \
  do {                                                                                         \
    cublasStatus_t st_ = (expr);                                                               \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                        \
      std::fprintf(stderr, "fp8_block_quant: %s failed: status %d (%s:%d)\n", #expr,           \
                   static_cast<int>(st_), __FILE__, __LINE__);                                 \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

constexpr int kGroup = 128;        // elements per scale
constexpr float kFp8Max = 448.0f;  // largest finite E4M3
constexpr int kThreads = 256;

__host__ __device__ inline float ScaleOf(float amax) { return fmaxf(amax, 1e-10f) / kFp8Max; }

// Naive: one block per SM; a warp per group; each of the 4 iterations loads one element and uses it
// at once, so every iteration waits for its load.
__global__ void __launch_bounds__(kThreads) quant_naive_kernel(const __nv_bfloat16* __restrict__ x,
                                                               __nv_fp8_e4m3* __restrict__ q,
                                                               float* __restrict__ scales,
                                                               int64_t groups) {
  const int lane = threadIdx.x % 32;
  const int64_t warp = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = int64_t{gridDim.x} * blockDim.x / 32;
  for (int64_t g = warp; g < groups; g += warps) {
    const __nv_bfloat16* src = x + g * kGroup;
    float amax = 0.f;
#pragma unroll 1
    for (int i = 0; i < 4; ++i) amax = fmaxf(amax, fabsf(__bfloat162float(src[i * 32 + lane])));
    for (int o = 16; o > 0; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float scale = ScaleOf(amax);
#pragma unroll 1
    for (int i = 0; i < 4; ++i) {
      q[g * kGroup + i * 32 + lane] = __nv_fp8_e4m3(__bfloat162float(src[i * 32 + lane]) / scale);
    }
    if (lane == 0) scales[g] = scale;
  }
}

// Optimized: 8 x SMs blocks; loads first (two 32-bit bf16 pairs per lane), then compute from registers.
__global__ void __launch_bounds__(kThreads) quant_opt_kernel(const __nv_bfloat16* __restrict__ x,
                                                             __nv_fp8_e4m3* __restrict__ q,
                                                             float* __restrict__ scales,
                                                             int64_t groups) {
  const int lane = threadIdx.x % 32;
  const int64_t warp = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = int64_t{gridDim.x} * blockDim.x / 32;
  for (int64_t g = warp; g < groups; g += warps) {
    const __nv_bfloat162* src = reinterpret_cast<const __nv_bfloat162*>(x + g * kGroup);
    __nv_bfloat162 v[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) v[i] = src[i * 32 + lane];  // all loads in flight together
    float2 f[2];
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      f[i] = __bfloat1622float2(v[i]);
      amax = fmaxf(amax, fmaxf(fabsf(f[i].x), fabsf(f[i].y)));
    }
    for (int o = 16; o > 0; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float scale = ScaleOf(amax);
    __nv_fp8x2_e4m3* dst = reinterpret_cast<__nv_fp8x2_e4m3*>(q + g * kGroup);
#pragma unroll
    for (int i = 0; i < 2; ++i) dst[i * 32 + lane] = __nv_fp8x2_e4m3(make_float2(f[i].x / scale, f[i].y / scale));
    if (lane == 0) scales[g] = scale;
  }
}

namespace {

struct Options {
  std::string variant = "both";
  int tokens = 4096, hidden = 7168, out_features = 2112;  // DeepSeek-V3 q_a+kv_a projection shape
  int iters = 50, warmup = 10;
  bool gemm = true;
};

float Median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.f : v[v.size() / 2];
}

// FP8 GEMM D[tokens x N] (bf16) = Xq[tokens x K] * Wq[N x K]^T, cuBLASLt "TN" as FP8 requires.
struct Fp8Gemm {
  cublasLtHandle_t lt{};
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t a{}, b{}, d{};
  cublasLtMatmulAlgo_t algo{};
  void* workspace = nullptr;
  size_t workspace_bytes = 64ull << 20;
  int m, n, k;
  Fp8Gemm(int tokens, int hidden, int out_features) : m(out_features), n(tokens), k(hidden) {
    LT_CHECK(cublasLtCreate(&lt));
    LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    LT_CHECK(cublasLtMatrixLayoutCreate(&a, CUDA_R_8F_E4M3, k, m, k));  // W: N rows of K
    LT_CHECK(cublasLtMatrixLayoutCreate(&b, CUDA_R_8F_E4M3, k, n, k));  // Xq: tokens rows of K
    LT_CHECK(cublasLtMatrixLayoutCreate(&d, CUDA_R_16BF, m, n, m));     // D: tokens rows of N
    CUDA_CHECK(cudaMalloc(&workspace, workspace_bytes));
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &workspace_bytes, sizeof(workspace_bytes)));
    cublasLtMatmulHeuristicResult_t h{};
    int found = 0;
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, a, b, d, d, pref, 1, &h, &found));
    if (found == 0) {
      std::fprintf(stderr, "fp8_block_quant: cuBLASLt found no FP8 algorithm\n");
      std::exit(1);
    }
    algo = h.algo;
    cublasLtMatmulPreferenceDestroy(pref);
  }
  void Run(const void* wq, const void* xq, void* out, cudaStream_t s) {
    const float alpha = 1.f, beta = 0.f;
    LT_CHECK(cublasLtMatmul(lt, op, &alpha, wq, a, xq, b, &beta, out, d, out, d, &algo, workspace,
                            workspace_bytes, s));
  }
};

void CpuQuantize(const std::vector<__nv_bfloat16>& x, std::vector<uint8_t>& q, std::vector<float>& s) {
  const int64_t groups = static_cast<int64_t>(x.size()) / kGroup;
  q.resize(x.size());
  s.resize(groups);
  for (int64_t g = 0; g < groups; ++g) {
    float amax = 0.f;
    for (int i = 0; i < kGroup; ++i) amax = std::max(amax, std::fabs(__bfloat162float(x[g * kGroup + i])));
    const float scale = ScaleOf(amax);
    s[g] = scale;
    for (int i = 0; i < kGroup; ++i) {
      __nv_fp8_e4m3 v(__bfloat162float(x[g * kGroup + i]) / scale);
      q[g * kGroup + i] = v.__x;
    }
  }
}

float Fp8ToFloat(uint8_t b) {
  __nv_fp8_e4m3 v;
  v.__x = b;
  return static_cast<float>(v);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? argv[++i] : (std::fprintf(stderr, "missing value\n"), std::exit(2), nullptr); };
    if (a == "--variant") o.variant = next();
    else if (a == "--tokens") o.tokens = std::atoi(next());
    else if (a == "--hidden") o.hidden = std::atoi(next());
    else if (a == "--out-features") o.out_features = std::atoi(next());
    else if (a == "--iters") o.iters = std::atoi(next());
    else if (a == "--warmup") o.warmup = std::atoi(next());
    else if (a == "--no-gemm") o.gemm = false;
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  if (o.hidden % kGroup != 0) { std::fprintf(stderr, "hidden must be a multiple of 128\n"); return 2; }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const int64_t elems = int64_t{o.tokens} * o.hidden, groups = elems / kGroup;
  const int64_t welems = int64_t{o.out_features} * o.hidden;
  std::printf("device=%s sms=%d tokens=%d hidden=%d out_features=%d groups=%lld\n", prop.name, sms,
              o.tokens, o.hidden, o.out_features, static_cast<long long>(groups));

  std::mt19937 rng(19);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<__nv_bfloat16> hx(elems);
  for (auto& v : hx) v = __float2bfloat16(nd(rng) * (1.f + 3.f * (rng() % 17 == 0)));  // a few outliers
  std::vector<uint8_t> hw(welems);
  for (auto& v : hw) { __nv_fp8_e4m3 f(nd(rng) * 0.5f); v = f.__x; }

  __nv_bfloat16* x; __nv_fp8_e4m3* q; float* scales; uint8_t* w; __nv_bfloat16* out;
  CUDA_CHECK(cudaMalloc(&x, elems * 2));
  CUDA_CHECK(cudaMalloc(&q, elems));
  CUDA_CHECK(cudaMalloc(&scales, groups * 4));
  CUDA_CHECK(cudaMalloc(&w, welems));
  CUDA_CHECK(cudaMalloc(&out, int64_t{o.tokens} * o.out_features * 2));
  CUDA_CHECK(cudaMemcpy(x, hx.data(), elems * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(w, hw.data(), welems, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  Fp8Gemm* gemm = o.gemm ? new Fp8Gemm(o.tokens, o.hidden, o.out_features) : nullptr;

  std::vector<uint8_t> ref_q; std::vector<float> ref_s;
  CpuQuantize(hx, ref_q, ref_s);

  auto quantize = [&](bool opt) {
    if (opt) quant_opt_kernel<<<8 * sms, kThreads, 0, s>>>(x, q, scales, groups);
    else quant_naive_kernel<<<sms, kThreads, 0, s>>>(x, q, scales, groups);
    CUDA_CHECK(cudaGetLastError());
  };
  int failures = 0;
  std::vector<std::string> variants;
  if (o.variant == "both" || o.variant == "naive") variants.push_back("naive");
  if (o.variant == "both" || o.variant == "opt") variants.push_back("opt");
  std::printf("%-6s %10s %10s %10s %8s %s\n", "variant", "quant_us", "gemm_us", "step_us", "share", "check");
  for (const std::string& v : variants) {
    const bool opt = v == "opt";
    // Check: quantize once, compare with the CPU reference.
    CUDA_CHECK(cudaMemset(q, 0, elems));
    CUDA_CHECK(cudaMemset(scales, 0, groups * 4));
    quantize(opt);
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<uint8_t> got_q(elems); std::vector<float> got_s(groups);
    CUDA_CHECK(cudaMemcpy(got_q.data(), q, elems, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(got_s.data(), scales, groups * 4, cudaMemcpyDeviceToHost));
    int64_t bad_q = 0, bad_s = 0;
    for (int64_t i = 0; i < elems; ++i) bad_q += got_q[i] != ref_q[i];
    for (int64_t i = 0; i < groups; ++i) bad_s += std::memcmp(&got_s[i], &ref_s[i], 4) != 0;
    int64_t bad_gemm = 0;
    if (gemm) {
      gemm->Run(w, q, out, s);
      CUDA_CHECK(cudaStreamSynchronize(s));
      std::vector<__nv_bfloat16> hout(int64_t{o.tokens} * o.out_features);
      CUDA_CHECK(cudaMemcpy(hout.data(), out, hout.size() * 2, cudaMemcpyDeviceToHost));
      for (int t = 0; t < 64; ++t) {
        const int r = rng() % o.tokens, c = rng() % o.out_features;
        double ref = 0, mag = 0;
        for (int k = 0; k < o.hidden; ++k) {
          const double p = double(Fp8ToFloat(ref_q[int64_t{r} * o.hidden + k])) * Fp8ToFloat(hw[int64_t{c} * o.hidden + k]);
          ref += p; mag += std::fabs(p);
        }
        const double got = __bfloat162float(hout[int64_t{r} * o.out_features + c]);
        if (std::fabs(got - ref) > 1e-2 * mag + 1e-2 * std::fabs(ref) + 1e-3) ++bad_gemm;
      }
    }
    const bool ok = bad_q == 0 && bad_s == 0 && bad_gemm == 0;
    failures += !ok;

    // Timed loop: events per step, one synchronize at the end (a synchronize per step would be a
    // finding of its own); the profiler range marks it for `sightline record --capture-range cudaProfilerApi`.
    const int n = o.warmup + o.iters;
    std::vector<cudaEvent_t> ev(3 * n);
    for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
    CUDA_CHECK(cudaProfilerStart());
    for (int it = 0; it < n; ++it) {
      const std::string name = "step " + std::to_string(it);
      nvtxRangePushA(name.c_str());
      CUDA_CHECK(cudaEventRecord(ev[3 * it], s));
      quantize(opt);
      CUDA_CHECK(cudaEventRecord(ev[3 * it + 1], s));
      if (gemm) gemm->Run(w, q, out, s);
      CUDA_CHECK(cudaEventRecord(ev[3 * it + 2], s));
      nvtxRangePop();
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaProfilerStop());
    std::vector<float> tq, tg, ts;
    for (int it = o.warmup; it < n; ++it) {
      float a, b, c;
      CUDA_CHECK(cudaEventElapsedTime(&a, ev[3 * it], ev[3 * it + 1]));
      CUDA_CHECK(cudaEventElapsedTime(&b, ev[3 * it + 1], ev[3 * it + 2]));
      CUDA_CHECK(cudaEventElapsedTime(&c, ev[3 * it], ev[3 * it + 2]));
      tq.push_back(a * 1e3f); tg.push_back(b * 1e3f); ts.push_back(c * 1e3f);
    }
    for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
    const float mq = Median(tq), mg = Median(tg), ms = Median(ts);
    std::printf("%-6s %10.1f %10.1f %10.1f %7.1f%% %s (fp8 mismatches %lld, scale mismatches %lld, gemm %lld/64)\n",
                v.c_str(), mq, mg, ms, ms > 0 ? 100.f * mq / ms : 0.f, ok ? "PASS" : "FAIL",
                static_cast<long long>(bad_q), static_cast<long long>(bad_s), static_cast<long long>(bad_gemm));
    std::printf("result variant=%s quant_us=%.2f gemm_us=%.2f step_us=%.2f quant_gbps=%.0f\n", v.c_str(), mq, mg,
                ms, mq > 0 ? (elems * 2.0 + elems + groups * 4.0) / (mq * 1e3) : 0.0);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return failures == 0 ? 0 : 1;
}
