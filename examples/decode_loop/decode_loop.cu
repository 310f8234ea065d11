// decode_loop: a small LLM-decode-shaped GPU workload instrumented with the Sightline instrument
// library. Each iteration embeds one token per sequence, runs `layers` transformer layers (RMSNorm,
// QKV GEMM, rotary, toy attention over a fixed-size KV cache, output GEMM, residual add, RMSNorm,
// gate/up GEMM, SiLU-mul, down GEMM, residual add), then the LM head GEMM and an argmax that feeds
// the next iteration's tokens. GEMMs are cuBLAS (FP16 in, FP32 accumulate); the rest are small
// custom kernels. Weights are random. It prints the median iteration time as
// `median_iteration_us=...`. Used by the README and the recorder's verification
// (docs/instrument.md, examples/decode_loop/README.md).
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sightline/instrument.h"

namespace {

#define CUDA_CHECK(expr)                                                  \
  do {                                                                    \
    cudaError_t err_ = (expr);                                            \
    if (err_ != cudaSuccess) {                                            \
      std::fprintf(stderr, "decode_loop: %s failed: %s (%s:%d)\n", #expr, \
                   cudaGetErrorString(err_), __FILE__, __LINE__);         \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

#define CUBLAS_CHECK(expr)                                                              \
  do {                                                                                  \
    cublasStatus_t st_ = (expr);                                                        \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      std::fprintf(stderr, "decode_loop: %s failed: cuBLAS status %d (%s:%d)\n", #expr, \
                   static_cast<int>(st_), __FILE__, __LINE__);                          \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

constexpr int kHeadDim = 128;
constexpr int kTokensPerBlock = 16;  // KV-cache block size reported in the iteration log

struct Options {
  int batch = 8;
  int hidden = 2048;
  int ffn = 5632;
  int layers = 8;
  int vocab = 32000;
  int context = 512;  // KV-cache slots per sequence and layer
  int iterations = 300;
  int warmup = 20;  // first iterations left out of the statistics (still instrumented)
  int device = 0;
  int plant_attention_ns = 0;  // extra time per Attention kernel (a planted regression)
  bool cuda_graph = false;
};

void PrintUsage(FILE* out) {
  std::fprintf(
      out,
      "usage: decode_loop [options]\n"
      "A toy LLM decode loop (cuBLAS GEMMs + small kernels) instrumented with Sightline.\n"
      "  --batch N        sequences per iteration (default 8)\n"
      "  --hidden N       hidden size, a multiple of %d (default 2048)\n"
      "  --ffn N          feed-forward size (default 5632)\n"
      "  --layers N       transformer layers (default 8)\n"
      "  --vocab N        vocabulary size (default 32000)\n"
      "  --context N      KV-cache slots per sequence (default 512)\n"
      "  --iterations N   iterations in all, numbered from 0 (default 300)\n"
      "  --warmup N       first iterations left out of the statistics (default 20)\n"
      "  --device N       CUDA device (default 0)\n"
      "  --cuda-graph     capture one iteration in a CUDA graph and replay it\n"
      "  --plant-attention-ns N  every Attention kernel waits N ns more (a planted regression\n"
      "                   of known size, for checking `sightline diff`'s verdict; default 0)\n"
      "  -h, --help       this text\n"
      "Environment (Sightline instrument library, docs/instrument.md):\n"
      "  SIGHTLINE_NVTX_LEVEL=0|1|2  ranges off / iterations / iterations and layers\n"
      "  SIGHTLINE_PROFILE_START_STOP=A-B,...  profiler window by iteration\n"
      "  SIGHTLINE_PROFILE_RANKS=LIST  ranks that open the window\n"
      "  SIGHTLINE_ITERATION_LOG=path|stderr  per-iteration JSON lines\n"
      "Prints: median_iteration_us=<float> (wall time from IterationBegin to IterationEnd,\n"
      "with a stream synchronize at the end of each iteration).\n",
      kHeadDim);
}

bool ParseInt(const char* text, int min_value, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min_value || v > (1 << 30)) return false;
  *out = static_cast<int>(v);
  return true;
}

// Returns 0 to go on, or the exit code.
int ParseArgs(int argc, char** argv, Options* o) {
  struct IntFlag {
    const char* name;
    int* value;
    int min_value;
  } flags[] = {{"--batch", &o->batch, 1},
               {"--hidden", &o->hidden, kHeadDim},
               {"--ffn", &o->ffn, 1},
               {"--layers", &o->layers, 1},
               {"--vocab", &o->vocab, 2},
               {"--context", &o->context, 1},
               {"--iterations", &o->iterations, 1},
               {"--warmup", &o->warmup, 0},
               {"--device", &o->device, 0},
               {"--plant-attention-ns", &o->plant_attention_ns, 0}};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      PrintUsage(stdout);
      return -1;
    }
    if (arg == "--cuda-graph") {
      o->cuda_graph = true;
      continue;
    }
    bool known = false;
    for (const IntFlag& f : flags) {
      if (arg != f.name) continue;
      known = true;
      if (i + 1 >= argc || !ParseInt(argv[i + 1], f.min_value, f.value)) {
        std::fprintf(stderr, "decode_loop: %s needs an integer >= %d\n", f.name, f.min_value);
        return 2;
      }
      ++i;
    }
    if (!known) {
      std::fprintf(stderr, "decode_loop: unknown option '%s' (see --help)\n", arg.c_str());
      return 2;
    }
  }
  if (o->hidden % kHeadDim != 0) {
    std::fprintf(stderr, "decode_loop: --hidden must be a multiple of %d\n", kHeadDim);
    return 2;
  }
  if (o->context > 8192) {
    std::fprintf(stderr, "decode_loop: --context must be at most 8192\n");
    return 2;
  }
  if (o->warmup >= o->iterations) {
    std::fprintf(stderr, "decode_loop: --warmup must be smaller than --iterations\n");
    return 2;
  }
  return 0;
}

// ---- kernels ------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t Hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

__global__ void FillRandom(__half* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float u = Hash(seed * 0x9e3779b97f4a7c15ULL + i) * (1.0f / 4294967296.0f) - 0.5f;
    p[i] = __float2half(2.0f * u * scale);
  }
}

__global__ void FillOnes(__half* p, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = __float2half(1.0f);
  }
}

// The step counter lives on the device so one captured graph serves every iteration.
__global__ void AdvanceStep(int* step) { *step += 1; }

__global__ void Embed(const int* tokens, const __half* table, __half* x, int hidden) {
  const int b = blockIdx.x;
  const __half* row = table + static_cast<size_t>(tokens[b]) * hidden;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x)
    x[static_cast<size_t>(b) * hidden + i] = row[i];
}

__device__ float BlockSum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / 32;
  v = lane < warps ? scratch[lane] : 0.0f;
  if (warp == 0) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  const float total = scratch[0];
  __syncthreads();
  return total;
}

__device__ float BlockMax(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / 32;
  v = lane < warps ? scratch[lane] : -INFINITY;
  if (warp == 0) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  const float total = scratch[0];
  __syncthreads();
  return total;
}

// out[b,:] = x[b,:] / rms(x[b,:]) * weight. One block per row.
__global__ void RmsNorm(const __half* x, const __half* weight, __half* out, int hidden) {
  __shared__ float scratch[32];
  const __half* row = x + static_cast<size_t>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    const float v = __half2float(row[i]);
    sum += v * v;
  }
  const float inv = rsqrtf(BlockSum(sum, scratch) / hidden + 1e-5f);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    out[static_cast<size_t>(blockIdx.x) * hidden + i] =
        __float2half(__half2float(row[i]) * inv * __half2float(weight[i]));
  }
}

// Rotary embedding on the q and k parts of qkv[b, 3*hidden] at position `base + *step`.
__global__ void Rotary(__half* qkv, const int* step, int hidden, int base) {
  const int b = blockIdx.x;
  const float pos = static_cast<float>(base + *step);
  for (int p = threadIdx.x; p < hidden; p += blockDim.x) {  // p indexes pairs over q and k
    const int part = p / (hidden / 2);                      // 0: q, 1: k
    const int pair = p % (hidden / 2);
    const int head = pair / (kHeadDim / 2), i = pair % (kHeadDim / 2);
    const float freq = __powf(10000.0f, -2.0f * i / kHeadDim);
    float s, c;
    __sincosf(pos * freq, &s, &c);
    __half* v = qkv + static_cast<size_t>(b) * 3 * hidden + part * hidden + head * kHeadDim + 2 * i;
    const float x0 = __half2float(v[0]), x1 = __half2float(v[1]);
    v[0] = __float2half(x0 * c - x1 * s);
    v[1] = __float2half(x0 * s + x1 * c);
  }
}

// Toy decode attention: one block of kHeadDim threads per (head, sequence). Writes this step's k
// and v into slot `*step % context` of the layer's cache, then attends over all `context` slots.
__global__ void Attention(const __half* qkv, __half* k_cache, __half* v_cache, const int* step,
                          __half* out, int hidden, int context, int plant_ns) {
  extern __shared__ float scores[];  // [context]
  __shared__ float scratch[32];
  const int head = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  const __half* q = qkv + static_cast<size_t>(b) * 3 * hidden + head * kHeadDim;
  const __half* k_new = q + hidden;
  const __half* v_new = q + 2 * hidden;
  const size_t seq = static_cast<size_t>(b) * context * hidden;
  const int slot = *step % context;
  k_cache[seq + static_cast<size_t>(slot) * hidden + head * kHeadDim + d] = k_new[d];
  v_cache[seq + static_cast<size_t>(slot) * hidden + head * kHeadDim + d] = v_new[d];
  __syncthreads();

  const int warp = d / 32, lane = d % 32, warps = kHeadDim / 32;
  const float scale = rsqrtf(static_cast<float>(kHeadDim));
  for (int t = warp; t < context; t += warps) {
    const __half* k = k_cache + seq + static_cast<size_t>(t) * hidden + head * kHeadDim;
    float dot = 0.0f;
    for (int j = lane; j < kHeadDim; j += 32) dot += __half2float(q[j]) * __half2float(k[j]);
    for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    if (lane == 0) scores[t] = dot * scale;
  }
  __syncthreads();
  float m = -INFINITY;
  for (int t = d; t < context; t += kHeadDim) m = fmaxf(m, scores[t]);
  m = BlockMax(m, scratch);
  float sum = 0.0f;
  for (int t = d; t < context; t += kHeadDim) {
    scores[t] = __expf(scores[t] - m);
    sum += scores[t];
  }
  sum = BlockSum(sum, scratch);  // its __syncthreads also publishes scores[]
  float acc = 0.0f;
  for (int t = 0; t < context; ++t) {
    acc += scores[t] *
           __half2float(v_cache[seq + static_cast<size_t>(t) * hidden + head * kHeadDim + d]);
  }
  out[static_cast<size_t>(b) * hidden + head * kHeadDim + d] = __float2half(acc / sum);
  if (plant_ns > 0 && d == 0) {
    // --plant-attention-ns: every block waits this long on the GPU's global timer. The blocks
    // (heads x batch, 128 by default) fit in one wave on an H100, so the kernel takes about
    // plant_ns longer.
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < static_cast<unsigned long long>(plant_ns));
  }
}

// out[b,i] = silu(gu[b,i]) * gu[b,ffn+i].
__global__ void SiluMul(const __half* gate_up, __half* out, int ffn) {
  const int b = blockIdx.y;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < ffn; i += gridDim.x * blockDim.x) {
    const float g = __half2float(gate_up[static_cast<size_t>(b) * 2 * ffn + i]);
    const float u = __half2float(gate_up[static_cast<size_t>(b) * 2 * ffn + ffn + i]);
    out[static_cast<size_t>(b) * ffn + i] = __float2half(g / (1.0f + __expf(-g)) * u);
  }
}

__global__ void ResidualAdd(__half* x, const __half* y, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    x[i] = __float2half(__half2float(x[i]) + __half2float(y[i]));
  }
}

// tokens[b] = argmax(logits[b,:]). One block of 256 threads per row.
__global__ void Argmax(const __half* logits, int* tokens, int vocab) {
  __shared__ float best_v[256];
  __shared__ int best_i[256];
  const __half* row = logits + static_cast<size_t>(blockIdx.x) * vocab;
  float bv = -INFINITY;
  int bi = 0;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float v = __half2float(row[i]);
    if (v > bv) bv = v, bi = i;
  }
  best_v[threadIdx.x] = bv;
  best_i[threadIdx.x] = bi;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      const float ov = best_v[threadIdx.x + s];
      const int oi = best_i[threadIdx.x + s];
      if (ov > best_v[threadIdx.x] || (ov == best_v[threadIdx.x] && oi < best_i[threadIdx.x])) {
        best_v[threadIdx.x] = ov;
        best_i[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) tokens[blockIdx.x] = best_i[0];
}

// ---- model --------------------------------------------------------------------------------------

struct Layer {
  __half *norm1, *w_qkv, *w_o, *norm2, *w_gate_up, *w_down, *k_cache, *v_cache;
};

struct Model {
  Options o;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  void* cublas_workspace = nullptr;
  __half *embedding, *final_norm, *lm_head;
  std::vector<Layer> layers;
  // Activations.
  __half *x, *h, *qkv, *attn, *proj, *gate_up, *act, *logits;
  int *tokens, *step;
  std::vector<std::string> layer_names;
};

__half* AllocRandom(size_t n, uint64_t seed, float scale, cudaStream_t stream) {
  __half* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, n * sizeof(__half)));
  FillRandom<<<1024, 256, 0, stream>>>(p, n, seed, scale);
  CUDA_CHECK(cudaGetLastError());
  return p;
}

__half* AllocOnes(size_t n, cudaStream_t stream) {
  __half* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, n * sizeof(__half)));
  FillOnes<<<256, 256, 0, stream>>>(p, n);
  CUDA_CHECK(cudaGetLastError());
  return p;
}

__half* Alloc(size_t n) {
  __half* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, n * sizeof(__half)));
  return p;
}

void InitModel(Model& m) {
  const Options& o = m.o;
  const size_t B = o.batch, H = o.hidden, F = o.ffn, V = o.vocab, C = o.context;
  CUDA_CHECK(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasCreate(&m.cublas));
  CUBLAS_CHECK(cublasSetStream(m.cublas, m.stream));
  // A fixed workspace keeps cuBLAS from allocating during graph capture.
  const size_t workspace_bytes = 32u << 20;
  CUDA_CHECK(cudaMalloc(&m.cublas_workspace, workspace_bytes));
  CUBLAS_CHECK(cublasSetWorkspace(m.cublas, m.cublas_workspace, workspace_bytes));

  uint64_t seed = 1;
  m.embedding = AllocRandom(V * H, seed++, 1.0f, m.stream);
  m.final_norm = AllocOnes(H, m.stream);
  m.lm_head = AllocRandom(H * V, seed++, 1.0f / std::sqrt(static_cast<float>(H)), m.stream);
  for (int l = 0; l < o.layers; ++l) {
    Layer y;
    y.norm1 = AllocOnes(H, m.stream);
    y.norm2 = AllocOnes(H, m.stream);
    y.w_qkv = AllocRandom(H * 3 * H, seed++, 1.0f / std::sqrt(static_cast<float>(H)), m.stream);
    y.w_o = AllocRandom(H * H, seed++, 1.0f / std::sqrt(static_cast<float>(H)), m.stream);
    y.w_gate_up = AllocRandom(H * 2 * F, seed++, 1.0f / std::sqrt(static_cast<float>(H)), m.stream);
    y.w_down = AllocRandom(F * H, seed++, 1.0f / std::sqrt(static_cast<float>(F)), m.stream);
    y.k_cache = AllocRandom(B * C * H, seed++, 1.0f, m.stream);
    y.v_cache = AllocRandom(B * C * H, seed++, 1.0f, m.stream);
    m.layers.push_back(y);
    m.layer_names.push_back("layer " + std::to_string(l));
  }
  m.x = Alloc(B * H);
  m.h = Alloc(B * H);
  m.qkv = Alloc(B * 3 * H);
  m.attn = Alloc(B * H);
  m.proj = Alloc(B * H);
  m.gate_up = Alloc(B * 2 * F);
  m.act = Alloc(B * F);
  m.logits = Alloc(B * V);
  CUDA_CHECK(cudaMalloc(&m.tokens, B * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&m.step, sizeof(int)));
  std::vector<int> first_tokens(B);
  for (size_t b = 0; b < B; ++b) first_tokens[b] = static_cast<int>((b * 7919 + 1) % V);
  CUDA_CHECK(cudaMemcpyAsync(m.tokens, first_tokens.data(), B * sizeof(int), cudaMemcpyHostToDevice,
                             m.stream));
  CUDA_CHECK(cudaMemsetAsync(m.step, 0, sizeof(int), m.stream));
  CUDA_CHECK(cudaStreamSynchronize(m.stream));
}

// y[B,N] = x[B,K] * w[K,N], all row-major; in cuBLAS's column-major terms y^T = w^T * x^T.
void Gemm(const Model& m, const __half* x, const __half* w, __half* y, int n, int k) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(m.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m.o.batch, k, &alpha, w,
                            CUDA_R_16F, n, x, CUDA_R_16F, k, &beta, y, CUDA_R_16F, n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

int Blocks(size_t n, int threads, int max_blocks) {
  return static_cast<int>(std::min<size_t>((n + threads - 1) / threads, max_blocks));
}

// Launches one iteration's work on m.stream (also what the CUDA graph captures).
void Forward(const Model& m) {
  const Options& o = m.o;
  const int B = o.batch, H = o.hidden, F = o.ffn, V = o.vocab, C = o.context;
  const int heads = H / kHeadDim;
  AdvanceStep<<<1, 1, 0, m.stream>>>(m.step);
  Embed<<<B, 256, 0, m.stream>>>(m.tokens, m.embedding, m.x, H);
  for (int l = 0; l < o.layers; ++l) {
    sightline::ScopedRange layer_range(m.layer_names[l].c_str(), sightline::kNvtxVerbose);
    const Layer& y = m.layers[l];
    RmsNorm<<<B, 256, 0, m.stream>>>(m.x, y.norm1, m.h, H);
    Gemm(m, m.h, y.w_qkv, m.qkv, 3 * H, H);
    Rotary<<<B, 256, 0, m.stream>>>(m.qkv, m.step, H, C);
    Attention<<<dim3(heads, B), kHeadDim, C * sizeof(float), m.stream>>>(
        m.qkv, y.k_cache, y.v_cache, m.step, m.attn, H, C, o.plant_attention_ns);
    Gemm(m, m.attn, y.w_o, m.proj, H, H);
    ResidualAdd<<<Blocks(static_cast<size_t>(B) * H, 256, 1024), 256, 0, m.stream>>>(
        m.x, m.proj, static_cast<size_t>(B) * H);
    RmsNorm<<<B, 256, 0, m.stream>>>(m.x, y.norm2, m.h, H);
    Gemm(m, m.h, y.w_gate_up, m.gate_up, 2 * F, H);
    SiluMul<<<dim3(Blocks(F, 256, 64), B), 256, 0, m.stream>>>(m.gate_up, m.act, F);
    Gemm(m, m.act, y.w_down, m.proj, H, F);
    ResidualAdd<<<Blocks(static_cast<size_t>(B) * H, 256, 1024), 256, 0, m.stream>>>(
        m.x, m.proj, static_cast<size_t>(B) * H);
  }
  RmsNorm<<<B, 256, 0, m.stream>>>(m.x, m.final_norm, m.h, H);
  Gemm(m, m.h, m.lm_head, m.logits, V, H);
  Argmax<<<B, 256, 0, m.stream>>>(m.logits, m.tokens, V);
  CUDA_CHECK(cudaGetLastError());
}

// The iteration log's request, token and KV-cache fields, as a decode-only batch would report them:
// every sequence is generating, each one's length grows by one token per iteration up to the cache.
void LogIterationFields(const Options& o, int iteration, bool graph) {
  const int64_t blocks_per_seq = (o.context + kTokensPerBlock - 1) / kTokensPerBlock;
  const int64_t length = std::min<int64_t>(o.context, o.context / 2 + iteration + 1);
  const int64_t used = o.batch * ((length + kTokensPerBlock - 1) / kTokensPerBlock);
  const int64_t max_blocks = o.batch * blocks_per_seq;
  sightline::LogField(SIGHTLINE_ACTIVE_REQUESTS, o.batch);
  sightline::LogField(SIGHTLINE_CONTEXT_REQUESTS, 0);
  sightline::LogField(SIGHTLINE_GENERATION_REQUESTS, o.batch);
  sightline::LogField(SIGHTLINE_CONTEXT_TOKENS, 0);
  sightline::LogField(SIGHTLINE_GENERATED_TOKENS, o.batch);
  sightline::LogField(SIGHTLINE_KV_BLOCKS_USED, used);
  sightline::LogField(SIGHTLINE_KV_BLOCKS_FREE, max_blocks - used);
  sightline::LogField(SIGHTLINE_KV_BLOCKS_MAX, max_blocks);
  sightline::LogField(SIGHTLINE_KV_TOKENS_PER_BLOCK, kTokensPerBlock);
  sightline::LogUser("mode", graph ? "cuda_graph" : "eager");
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * (v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int rc = ParseArgs(argc, argv, &o); rc != 0) return rc < 0 ? 0 : rc;

  int devices = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&devices); err != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "decode_loop: no CUDA device available (%s)\n",
                 err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return 1;
  }
  if (o.device >= devices) {
    std::fprintf(stderr, "decode_loop: --device %d but only %d device(s)\n", o.device, devices);
    return 2;
  }
  CUDA_CHECK(cudaSetDevice(o.device));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));

  Model m;
  m.o = o;
  InitModel(m);
  const int custom_kernels = 2 + 8 * o.layers + 2;
  const int gemms = 4 * o.layers + 1;
  std::printf(
      "decode_loop: device=%s batch=%d hidden=%d ffn=%d layers=%d vocab=%d context=%d "
      "iterations=%d warmup=%d mode=%s nvtx_level=%d plant_attention_ns=%d\n",
      prop.name, o.batch, o.hidden, o.ffn, o.layers, o.vocab, o.context, o.iterations, o.warmup,
      o.cuda_graph ? "cuda_graph" : "eager", sightline_nvtx_level(), o.plant_attention_ns);
  std::printf("custom_kernels_per_iteration=%d gemms_per_iteration=%d\n", custom_kernels, gemms);

  cudaGraphExec_t graph_exec = nullptr;
  if (o.cuda_graph) {
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(m.stream, cudaStreamCaptureModeThreadLocal));
    Forward(m);
    CUDA_CHECK(cudaStreamEndCapture(m.stream, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&graph_exec, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));
  }

  std::vector<double> iteration_us;
  iteration_us.reserve(o.iterations);
  for (int it = 0; it < o.iterations; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    sightline::IterationBegin(it);
    LogIterationFields(o, it, o.cuda_graph);
    if (o.cuda_graph) {
      CUDA_CHECK(cudaGraphLaunch(graph_exec, m.stream));
    } else {
      Forward(m);
    }
    // A decode loop reads the sampled tokens back each step; the synchronize stands for that.
    CUDA_CHECK(cudaStreamSynchronize(m.stream));
    sightline::IterationEnd(it);
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= o.warmup) {
      iteration_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }

  std::vector<int> tokens(o.batch);
  CUDA_CHECK(cudaMemcpy(tokens.data(), m.tokens, o.batch * sizeof(int), cudaMemcpyDeviceToHost));
  long long checksum = 0;
  for (int t : tokens) checksum += t;
  double mean = 0;
  for (double v : iteration_us) mean += v;
  mean /= iteration_us.size();
  std::printf(
      "measured_iterations=%zu mean_iteration_us=%.2f p10_iteration_us=%.2f "
      "p90_iteration_us=%.2f token_checksum=%lld\n",
      iteration_us.size(), mean, Percentile(iteration_us, 0.1), Percentile(iteration_us, 0.9),
      checksum);
  std::printf("median_iteration_us=%.2f\n", Percentile(iteration_us, 0.5));
  std::fflush(stdout);
  sightline::Flush();

  if (graph_exec) CUDA_CHECK(cudaGraphExecDestroy(graph_exec));
  CUBLAS_CHECK(cublasDestroy(m.cublas));
  CUDA_CHECK(cudaStreamDestroy(m.stream));
  return 0;
}
