// gated_mlp: the TensorRT-LLM talk's second kernel case study (issue 19). A gated MLP computes
// down(silu(fc(x)) * gate(x)) (bf16, cuBLAS GEMMs with fp32 accumulation). Two variants:
//   before: FC GEMM and gate GEMM on the same input (two launches, x read twice), then silu_mul.
//   after:  one GEMM against the concatenated [fc; gate] weight (N = 2 x intermediate), then a
//   SwiGLU
//           kernel that splits its output.
// Both end with the down GEMM. Checked: after against before (the activation h, relative
// tolerance), and h against a CPU fp32 reference on sampled elements. Timing: CUDA events after
// warm-up, medians of the fc+gate+activation part ("up") and the whole MLP, per token count. NVTX:
// "step N" per iteration, "mlp" per layer, so `sightline analyze` / `diff` see iterations and
// layers. Usage: gated_mlp [--variant before|after|both] [--tokens 16,128,...] [--hidden H]
// [--inter I]
//                  [--layers L] [--iters N] [--warmup W] [--tune]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sightline/gpu_check.h"

// Every CUDA and cuBLAS call: on failure the call, the library's message and file:line, then
// exit 1.
#define CUDA_CHECK(...) SIGHTLINE_GPU_CHECK_OR(::sightline::gpu::ExitOnError, __VA_ARGS__)

__device__ inline float Silu(float v) { return v / (1.f + __expf(-v)); }

// before: h = silu(fc) * gate, two separate [T x I] inputs.
__global__ void silu_mul_kernel(const __nv_bfloat16* __restrict__ fc,
                                const __nv_bfloat16* __restrict__ gate,
                                __nv_bfloat16* __restrict__ h, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    h[i] = __float2bfloat16(Silu(__bfloat162float(fc[i])) * __bfloat162float(gate[i]));
  }
}

// after: one [T x 2I] input, fc in columns [0, I), gate in [I, 2I) of each row.
__global__ void swiglu_kernel(const __nv_bfloat16* __restrict__ fcgate,
                              __nv_bfloat16* __restrict__ h, int64_t tokens, int64_t inter) {
  const int64_t n = tokens * inter;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = i / inter, c = i % inter;
    const __nv_bfloat16* row = fcgate + t * 2 * inter;
    h[i] = __float2bfloat16(Silu(__bfloat162float(row[c])) * __bfloat162float(row[inter + c]));
  }
}

namespace {

float Median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.f : v[v.size() / 2];
}

// GEMMs: cuBLAS's default choice (cublasGemmEx), or with --tune the fastest of up to 16
// cuBLASLt algorithms per shape, timed once before the runs (as TensorRT-LLM's GEMM plugin
// profiles its tactics), so that each variant gets its best GEMM.
struct Tuned {
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t a{}, b{}, c{};
  cublasLtMatmulAlgo_t algo{};
};
struct GemmRunner {
  cublasHandle_t handle{};
  cublasLtHandle_t lt{};
  cudaStream_t stream{};
  bool tune = false;
  void* workspace = nullptr;
  size_t workspace_bytes = 32ull << 20;
  std::map<std::tuple<int, int, int>, Tuned> tuned;

  void Setup(int t, int n, int k, const __nv_bfloat16* x, const __nv_bfloat16* w,
             __nv_bfloat16* y) {
    if (!tune || tuned.count({t, n, k})) return;
    Tuned g;
    CUDA_CHECK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CUDA_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUDA_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CUDA_CHECK(cublasLtMatrixLayoutCreate(&g.a, CUDA_R_16BF, k, n, k));
    CUDA_CHECK(cublasLtMatrixLayoutCreate(&g.b, CUDA_R_16BF, k, t, k));
    CUDA_CHECK(cublasLtMatrixLayoutCreate(&g.c, CUDA_R_16BF, n, t, n));
    cublasLtMatmulPreference_t pref;
    CUDA_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t res[16];
    int found = 0;
    CUDA_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.a, g.b, g.c, g.c, pref, 16, res, &found));
    cublasLtMatmulPreferenceDestroy(pref);
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    float best = 1e30f;
    int best_i = -1;
    const float alpha = 1.f, beta = 0.f;
    for (int i = 0; i < found; ++i) {
      std::vector<float> ms;
      bool ok = true;
      for (int r = 0; r < 8 && ok; ++r) {
        CUDA_CHECK(cudaEventRecord(e0, stream));
        ok = cublasLtMatmul(lt, g.op, &alpha, w, g.a, x, g.b, &beta, y, g.c, y, g.c, &res[i].algo,
                            workspace, workspace_bytes, stream) == CUBLAS_STATUS_SUCCESS;
        CUDA_CHECK(cudaEventRecord(e1, stream));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float v;
        CUDA_CHECK(cudaEventElapsedTime(&v, e0, e1));
        if (r >= 2) ms.push_back(v);
      }
      if (!ok) continue;
      std::sort(ms.begin(), ms.end());
      if (ms[ms.size() / 2] < best) {
        best = ms[ms.size() / 2];
        best_i = i;
      }
    }
    if (best_i < 0) {
      std::fprintf(stderr, "gated_mlp: no cuBLASLt algorithm for %dx%dx%d\n", t, n, k);
      std::exit(1);
    }
    g.algo = res[best_i].algo;
    std::printf("tuned gemm tokens=%d n=%d k=%d: %d candidates, best #%d %.1f us\n", t, n, k, found,
                best_i, best * 1e3f);
    tuned[{t, n, k}] = g;
  }

  // Row-major Y[T x N] = X[T x K] * W[N x K]^T, i.e. column-major Y^T = W^T(op T) * X^T.
  void Run(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int t, int n, int k) {
    const float alpha = 1.f, beta = 0.f;
    if (tune) {
      const Tuned& g = tuned.at({t, n, k});
      CUDA_CHECK(cublasLtMatmul(lt, g.op, &alpha, w, g.a, x, g.b, &beta, y, g.c, y, g.c, &g.algo,
                                workspace, workspace_bytes, stream));
      return;
    }
    CUDA_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, t, k, &alpha, w, CUDA_R_16BF, k, x,
                            CUDA_R_16BF, k, &beta, y, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string variant = "both";
  std::vector<int> token_counts = {16, 128, 512, 2048};
  int hidden = 4096, inter = 14336, layers = 4, iters = 30, warmup = 5;
  bool tune = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value\n");
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--variant")
      variant = next();
    else if (a == "--tokens") {
      token_counts.clear();
      std::stringstream ss(next());
      for (std::string p; std::getline(ss, p, ',');) token_counts.push_back(std::atoi(p.c_str()));
    } else if (a == "--hidden")
      hidden = std::atoi(next().c_str());
    else if (a == "--inter")
      inter = std::atoi(next().c_str());
    else if (a == "--layers")
      layers = std::atoi(next().c_str());
    else if (a == "--iters")
      iters = std::atoi(next().c_str());
    else if (a == "--warmup")
      warmup = std::atoi(next().c_str());
    else if (a == "--tune")
      tune = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const int max_t = *std::max_element(token_counts.begin(), token_counts.end());
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "device=%s hidden=%d inter=%d layers=%d gemm=%s\n", prop.name, hidden, inter, layers,
      tune ? "cublasLt, fastest of the heuristic's candidates per shape" : "cublasGemmEx default");

  // Weights: fc and gate live inside the concatenated buffer, so both variants use the same values.
  std::mt19937 rng(19);
  std::normal_distribution<float> nd(0.f, 1.f);
  const float ws = 1.f / std::sqrt(float(hidden));
  std::vector<__nv_bfloat16> h_wcat(int64_t{2} * inter * hidden), h_wdown(int64_t{hidden} * inter),
      h_x(int64_t{max_t} * hidden);
  for (auto& v : h_wcat) v = __float2bfloat16(nd(rng) * ws);
  for (auto& v : h_wdown) v = __float2bfloat16(nd(rng) / std::sqrt(float(inter)));
  for (auto& v : h_x) v = __float2bfloat16(nd(rng));
  __nv_bfloat16 *wcat, *wdown, *x, *fcgate, *fc, *gate, *hact, *y, *h_before;
  CUDA_CHECK(cudaMalloc(&wcat, h_wcat.size() * 2));
  CUDA_CHECK(cudaMalloc(&wdown, h_wdown.size() * 2));
  CUDA_CHECK(cudaMalloc(&x, h_x.size() * 2));
  CUDA_CHECK(cudaMalloc(&fcgate, int64_t{max_t} * 2 * inter * 2));
  CUDA_CHECK(cudaMalloc(&fc, int64_t{max_t} * inter * 2));
  CUDA_CHECK(cudaMalloc(&gate, int64_t{max_t} * inter * 2));
  CUDA_CHECK(cudaMalloc(&hact, int64_t{max_t} * inter * 2));
  CUDA_CHECK(cudaMalloc(&h_before, int64_t{max_t} * inter * 2));
  CUDA_CHECK(cudaMalloc(&y, int64_t{max_t} * hidden * 2));
  CUDA_CHECK(cudaMemcpy(wcat, h_wcat.data(), h_wcat.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(wdown, h_wdown.data(), h_wdown.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(x, h_x.data(), h_x.size() * 2, cudaMemcpyHostToDevice));
  const __nv_bfloat16* wfc = wcat;
  const __nv_bfloat16* wgate = wcat + int64_t{inter} * hidden;
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  cublasHandle_t cb;
  CUDA_CHECK(cublasCreate(&cb));
  CUDA_CHECK(cublasSetStream(cb, s));
  GemmRunner gemm;
  gemm.handle = cb;
  gemm.stream = s;
  gemm.tune = tune;
  CUDA_CHECK(cublasLtCreate(&gemm.lt));
  CUDA_CHECK(cudaMalloc(&gemm.workspace, gemm.workspace_bytes));
  auto Gemm = [&](cublasHandle_t, const __nv_bfloat16* a, const __nv_bfloat16* w, __nv_bfloat16* y,
                  int t, int n, int k) { gemm.Run(a, w, y, t, n, k); };
  const int ew_blocks = prop.multiProcessorCount * 8;

  auto up = [&](bool fused, int t) {
    if (!fused) {
      Gemm(cb, x, wfc, fc, t, inter, hidden);
      Gemm(cb, x, wgate, gate, t, inter, hidden);
      silu_mul_kernel<<<ew_blocks, 256, 0, s>>>(fc, gate, hact, int64_t{t} * inter);
    } else {
      Gemm(cb, x, wcat, fcgate, t, 2 * inter, hidden);
      swiglu_kernel<<<ew_blocks, 256, 0, s>>>(fcgate, hact, t, inter);
    }
    CUDA_CHECK(cudaGetLastError());
  };
  std::vector<std::string> variants;
  if (variant == "both" || variant == "before") variants.push_back("before");
  if (variant == "both" || variant == "after") variants.push_back("after");
  int failures = 0;
  std::printf("%-7s %6s %10s %10s %10s %s\n", "variant", "tokens", "up_us", "mlp_us", "launches",
              "check");
  for (int t : token_counts) {
    for (const std::string& v : variants) {
      const bool fused = v == "after";
      if (fused) {
        gemm.Setup(t, 2 * inter, hidden, x, wcat, fcgate);
      } else {
        gemm.Setup(t, inter, hidden, x, wfc, fc);
      }
      gemm.Setup(t, hidden, inter, hact, wdown, y);
      // Check: h of this variant against the CPU on sampled elements, and after against before.
      up(fused, t);
      CUDA_CHECK(cudaStreamSynchronize(s));
      std::vector<__nv_bfloat16> got(int64_t{t} * inter);
      CUDA_CHECK(cudaMemcpy(got.data(), hact, got.size() * 2, cudaMemcpyDeviceToHost));
      int bad = 0;
      for (int k = 0; k < 64; ++k) {
        const int r = rng() % t, c = rng() % inter;
        double a = 0, g = 0;
        for (int j = 0; j < hidden; ++j) {
          const double xv = __bfloat162float(h_x[int64_t{r} * hidden + j]);
          a += xv * __bfloat162float(h_wcat[int64_t{c} * hidden + j]);
          g += xv * __bfloat162float(h_wcat[(int64_t{inter} + c) * hidden + j]);
        }
        const double ref = a / (1.0 + std::exp(-a)) * g;
        const double val = __bfloat162float(got[int64_t{r} * inter + c]);
        if (std::fabs(val - ref) > 2e-2 * std::fabs(ref) + 2e-2) ++bad;
      }
      double max_rel_vs_before = 0;
      if (!fused) {
        CUDA_CHECK(cudaMemcpy(h_before, hact, got.size() * 2, cudaMemcpyDeviceToDevice));
      } else if (variant == "both") {
        std::vector<__nv_bfloat16> prev(got.size());
        CUDA_CHECK(cudaMemcpy(prev.data(), h_before, prev.size() * 2, cudaMemcpyDeviceToHost));
        int64_t off = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          const double p = __bfloat162float(prev[i]), q = __bfloat162float(got[i]);
          const double rel = std::fabs(p - q) / (std::fabs(p) + 1e-2);
          max_rel_vs_before = std::max(max_rel_vs_before, rel);
          off += rel > 2e-2;
        }
        if (off > 0) bad += 1;
      }
      failures += bad != 0;

      // Timed loop: events per step (layer 0's "up" part and its whole MLP), one synchronize at the
      // end; the profiler range marks it for `sightline record --capture-range cudaProfilerApi`.
      const int n = warmup + iters;
      std::vector<cudaEvent_t> ev(3 * n);
      for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
      CUDA_CHECK(cudaProfilerStart());
      for (int it = 0; it < n; ++it) {
        const std::string name = "step " + std::to_string(it);
        nvtxRangePushA(name.c_str());
        for (int l = 0; l < layers; ++l) {
          nvtxRangePushA("mlp");
          if (l == 0) CUDA_CHECK(cudaEventRecord(ev[3 * it], s));
          up(fused, t);
          if (l == 0) CUDA_CHECK(cudaEventRecord(ev[3 * it + 1], s));
          Gemm(cb, hact, wdown, y, t, hidden, inter);
          if (l == 0) CUDA_CHECK(cudaEventRecord(ev[3 * it + 2], s));
          nvtxRangePop();
        }
        nvtxRangePop();
      }
      CUDA_CHECK(cudaStreamSynchronize(s));
      CUDA_CHECK(cudaProfilerStop());
      std::vector<float> tu, tm;
      for (int it = warmup; it < n; ++it) {
        float a, b;
        CUDA_CHECK(cudaEventElapsedTime(&a, ev[3 * it], ev[3 * it + 1]));
        CUDA_CHECK(cudaEventElapsedTime(&b, ev[3 * it], ev[3 * it + 2]));
        tu.push_back(a * 1e3f);
        tm.push_back(b * 1e3f);
      }
      for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
      std::printf(
          "%-7s %6d %10.1f %10.1f %10d %s (cpu samples off %d/64, max rel vs before %.4f)\n",
          v.c_str(), t, Median(tu), Median(tm), fused ? 3 : 4, bad == 0 ? "PASS" : "FAIL", bad,
          max_rel_vs_before);
      std::printf("result variant=%s tokens=%d up_us=%.2f mlp_us=%.2f\n", v.c_str(), t, Median(tu),
                  Median(tm));
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return failures == 0 ? 0 : 1;
}
