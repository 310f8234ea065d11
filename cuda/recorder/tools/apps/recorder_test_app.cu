// A CUDA program with known work per iteration, for checking the recorder against Nsight Systems:
// each iteration is an NVTX range "iteration <i>" holding 3 kernel launches, a CUDA graph launch of
// 2 kernels, a memset, a host-to-device copy and a stream synchronize (5 kernels per iteration).
// --window A-B[,C-D...] calls cudaProfilerStart before iteration A and cudaProfilerStop after B.
// Prints what it ran as one JSON line, so scripts can compare counts without trusting the recorder.
//   recorder_test_app [--iters N] [--window 10-14,30-34] [--work K]
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sightline/gpu_check.h"

// A failed CUDA call ends the program: the call, the error and file:line on stderr, exit 1.
#define CHECK(...) SIGHTLINE_GPU_CHECK_OR(::sightline::gpu::ExitOnError, __VA_ARGS__)

__global__ void scale_kernel(float* x, int n, float a, int work) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    for (int k = 0; k < work; ++k) v = v * a + 0.5f;
    x[i] = v;
  }
}

__global__ void add_kernel(float* y, const float* x, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) y[i] += tile[threadIdx.x];
}

__global__ void reduce_kernel(const float* x, float* out, int n) {
  __shared__ float s[256];
  float acc = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    acc += x[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

__global__ void graph_kernel_a(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.f;
}

__global__ void graph_kernel_b(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] - 0.25f;
}

struct Window {
  int first, last;
};

int main(int argc, char** argv) {
  int iters = 50, work = 200;
  std::vector<Window> windows;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--work") && i + 1 < argc) {
      work = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--window") && i + 1 < argc) {
      std::string spec = argv[++i];
      size_t pos = 0;
      while (pos < spec.size()) {
        size_t comma = spec.find(',', pos);
        if (comma == std::string::npos) comma = spec.size();
        Window w{};
        if (std::sscanf(spec.substr(pos, comma - pos).c_str(), "%d-%d", &w.first, &w.last) != 2) {
          std::fprintf(stderr, "bad --window %s\n", spec.c_str());
          return 2;
        }
        windows.push_back(w);
        pos = comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--iters N] [--window A-B,...] [--work K]\n", argv[0]);
      return 2;
    }
  }

  // Under mpirun each rank takes its own GPU.
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    CHECK(cudaSetDevice(std::atoi(local) % count));
  }
  const int n = 1 << 20;
  float *x, *y, *sum, *host;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&sum, sizeof(float)));
  CHECK(cudaMallocHost(&host, 4096 * sizeof(float)));
  for (int i = 0; i < 4096; ++i) host[i] = 1.f;
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // The graph: two kernels captured from the stream.
  cudaGraph_t graph;
  cudaGraphExec_t graph_exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  graph_kernel_a<<<n / 256, 256, 0, stream>>>(y, n);
  graph_kernel_b<<<n / 256, 256, 0, stream>>>(y, n);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&graph_exec, graph, 0));

  nvtxDomainHandle_t domain = nvtxDomainCreateA("recorder_test");
  nvtxRangeId_t whole = nvtxRangeStartA("all iterations");
  nvtxMarkA("loop begins");
  long kernels_in_windows = 0, iterations_in_windows = 0;
  bool in_window = false;
  std::vector<double> iter_ms;
  for (int it = 0; it < iters; ++it) {
    for (const Window& w : windows) {
      if (w.first == it) {
        CHECK(cudaProfilerStart());
        in_window = true;
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    char name[64];
    std::snprintf(name, sizeof name, "iteration %d", it);
    nvtxRangePushA(name);
    nvtxEventAttributes_t attr = {};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "body";
    nvtxDomainRangePushEx(domain, &attr);
    CHECK(cudaMemcpyAsync(x, host, 4096 * sizeof(float), cudaMemcpyHostToDevice, stream));
    CHECK(cudaMemsetAsync(sum, 0, sizeof(float), stream));
    scale_kernel<<<n / 256, 256, 0, stream>>>(x, n, 1.0001f, work);
    add_kernel<<<n / 256, 256, 256 * sizeof(float), stream>>>(y, x, n);
    reduce_kernel<<<264, 256, 0, stream>>>(y, sum, n);
    CHECK(cudaGraphLaunch(graph_exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    nvtxDomainRangePop(domain);
    nvtxRangePop();
    iter_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (in_window) {
      kernels_in_windows += 5;
      ++iterations_in_windows;
    }
    for (const Window& w : windows) {
      if (w.last == it) {
        CHECK(cudaProfilerStop());
        in_window = false;
      }
    }
  }
  nvtxRangeEnd(whole);
  CHECK(cudaDeviceSynchronize());
  std::vector<double> sorted = iter_ms;
  std::sort(sorted.begin(), sorted.end());
  std::printf(
      "{\"iterations\": %d, \"kernels_per_iteration\": 5, \"kernels\": %d, "
      "\"iterations_in_windows\": %ld, \"kernels_in_windows\": %ld, \"median_iteration_ms\": "
      "%.4f}\n",
      iters, iters * 5, iterations_in_windows, kernels_in_windows,
      sorted.empty() ? 0.0 : sorted[sorted.size() / 2]);
  cudaGraphExecDestroy(graph_exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(x);
  cudaFree(y);
  cudaFree(sum);
  cudaFreeHost(host);
  return 0;
}
