// A CUDA program whose GPU metrics are known from the program itself, for checking
// `sightline record --gpu-metrics` (gpu_metrics_check.py): phases of known character, each
// bracketed by a one-thread kernel that stores the GPU's %globaltimer, so the check can place the
// phases on the GPU clock and line the recorder's kernel records (CUPTI clock) up with it.
//   idle      : nothing on the GPU (the host sleeps)
//   copy      : a grid-stride float4 copy over 2 x 1 GiB: DRAM-bound (the program times its
//   bandwidth) tiny      : one-block kernels of a few microseconds back to back: the GPU is "busy"
//   on the
//               timeline while nearly every SM is empty
//   fma       : an FMA loop on every SM: SMs busy, DRAM idle
// Prints one JSON line: the phase marks (globaltimer ns) and the copy bandwidth.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "sightline/gpu_check.h"

#define CHECK(...) SIGHTLINE_GPU_CHECK_OR(::sightline::gpu::ExitOnError, __VA_ARGS__)

__global__ void phase_mark(unsigned long long* out) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *out = t;
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

__global__ void tiny_kernel(float* x, int work) {
  float v = x[threadIdx.x];
  for (int k = 0; k < work; ++k) v = v * 1.0001f + 0.5f;
  x[threadIdx.x] = v;
}

__global__ void fma_kernel(float* x, int work) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i], b = a * 0.5f, c = a * 0.25f, d = a * 0.125f;
  for (int k = 0; k < work; ++k) {
    a = a * 1.0001f + 0.5f;
    b = b * 0.9999f + 0.25f;
    c = c * 1.0002f + 0.125f;
    d = d * 0.9998f + 0.0625f;
  }
  x[i] = a + b + c + d;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const size_t n = (1ull << 30) / sizeof(float4);
  float4 *in = nullptr, *out = nullptr;
  float* x = nullptr;
  unsigned long long* marks = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float4)));
  CHECK(cudaMalloc(&out, n * sizeof(float4)));
  CHECK(cudaMalloc(&x, static_cast<size_t>(sms) * 8 * 256 * sizeof(float)));
  CHECK(cudaMalloc(&marks, 16 * sizeof(unsigned long long)));
  CHECK(cudaMemset(in, 0, n * sizeof(float4)));
  CHECK(cudaMemset(x, 0, static_cast<size_t>(sms) * 8 * 256 * sizeof(float)));
  copy_kernel<<<sms * 8, 256>>>(in, out, n);  // warm-up
  tiny_kernel<<<1, 32>>>(x, 1000);
  fma_kernel<<<sms * 8, 256>>>(x, 1000);
  CHECK(cudaDeviceSynchronize());

  int mark = 0;
  auto put_mark = [&] {
    phase_mark<<<1, 1>>>(marks + mark++);
    CHECK(cudaDeviceSynchronize());
  };
  auto run_for = [&](double seconds, auto&& launch) {
    const double t0 = Now();
    int launches = 0;
    while (Now() - t0 < seconds) {
      for (int i = 0; i < 5; ++i, ++launches) launch();
      CHECK(cudaDeviceSynchronize());
    }
    return std::make_pair(launches, Now() - t0);
  };
  put_mark();  // 0: idle from here
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  put_mark();  // 1: copy
  const auto copy = run_for(0.3, [&] { copy_kernel<<<sms * 8, 256>>>(in, out, n); });
  put_mark();  // 2: idle
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  put_mark();  // 3: tiny
  run_for(0.3, [&] { tiny_kernel<<<1, 32>>>(x, 2000); });
  put_mark();  // 4: idle
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  put_mark();  // 5: fma
  run_for(0.3, [&] { fma_kernel<<<sms * 8, 256>>>(x, 20000); });
  put_mark();  // 6: end
  CHECK(cudaGetLastError());

  std::vector<unsigned long long> m(mark);
  CHECK(cudaMemcpy(m.data(), marks, m.size() * sizeof(m[0]), cudaMemcpyDeviceToHost));
  std::string list;
  for (size_t i = 0; i < m.size(); ++i) list += (i ? "," : "") + std::to_string(m[i]);
  const double copy_gbps = copy.first * 2.0 * n * sizeof(float4) / copy.second / 1e9;
  std::printf(
      "{\"marks\": [%s], \"phases\": [\"idle\", \"copy\", \"idle\", \"tiny\", \"idle\", "
      "\"fma\"], \"copy_gbps\": %.1f, \"device\": \"%s\", \"sms\": %d}\n",
      list.c_str(), copy_gbps, prop.name, sms);
  cudaFree(in);
  cudaFree(out);
  cudaFree(x);
  cudaFree(marks);
  return 0;
}
