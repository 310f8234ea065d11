// A CUDA program whose GPU memory is known from the program itself, for checking
// `sightline record --cuda-memory-usage` and nsys --cuda-memory-usage=true (memory_check.py).
// Phases, each an NVTX range:
//   nccl          : a one-GPU NCCL communicator and an all-reduce (NCCL's own allocations; kept
//                   until the end), when built with NCCL
//   static        : a kernel touches a 1 MiB __device__ array (static module memory)
//   cudaMalloc    : 3 x 256 MiB, one freed
//   default pool  : cudaMallocAsync 4 x 64 MiB on a stream, 2 freed, synchronized
//   explicit pool : a pool created with a release threshold of UINT64_MAX (keeps what it
//                   reserves), 8 x 32 MiB from it, all freed, synchronized: the pool still holds
//                   256 MiB with nothing allocated; then trimmed to 0 and destroyed
//   end           : everything freed
// Prints one JSON object: the program's own figures (what it holds at each checkpoint and its
// peak, the pools' reserved/used high-water marks from cudaMemPoolGetAttribute).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#ifdef SIGHTLINE_WITH_NCCL
#include <nccl.h>
#endif

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sightline/gpu_check.h"

#define CHECK(...) SIGHTLINE_GPU_CHECK_OR(::sightline::gpu::ExitOnError, __VA_ARGS__)

constexpr size_t kMiB = size_t{1} << 20;
__device__ char g_static_table[kMiB];

__global__ void touch_static(int v) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < kMiB;
       i += size_t{gridDim.x} * blockDim.x)
    g_static_table[i] = static_cast<char>(v);
}

namespace {

int64_t g_held = 0, g_peak = 0;  // the program's own allocations (cudaMalloc and pools)
std::string g_marks;

void Hold(int64_t bytes) {
  g_held += bytes;
  if (g_held > g_peak) g_peak = g_held;
}

struct PoolFigures {
  uint64_t reserved = 0, used = 0, reserved_high = 0, used_high = 0;
};
PoolFigures Figures(cudaMemPool_t pool) {
  PoolFigures f;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &f.reserved));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &f.used));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &f.reserved_high));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &f.used_high));
  return f;
}

void Mark(const char* name) {
  size_t free = 0, total = 0;
  CHECK(cudaMemGetInfo(&free, &total));
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s{\"at\": \"%s\", \"held\": %lld, \"device_used\": %zu}",
                g_marks.empty() ? "" : ", ", name, static_cast<long long>(g_held), total - free);
  g_marks += buf;
}

}  // namespace

int main() {
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Mark("start");

#ifdef SIGHTLINE_WITH_NCCL
  nvtxRangePushA("nccl");
  ncclComm_t comm;
  int dev = 0;
  if (ncclCommInitAll(&comm, 1, &dev) != ncclSuccess) {
    std::fprintf(stderr, "ncclCommInitAll failed\n");
    return 1;
  }
  float* buf = nullptr;
  CHECK(cudaMalloc(&buf, 16 * kMiB));
  Hold(16 * kMiB);
  if (ncclAllReduce(buf, buf, 4 * kMiB, ncclFloat, ncclSum, comm, stream) != ncclSuccess) return 1;
  CHECK(cudaStreamSynchronize(stream));
  nvtxRangePop();
  Mark("nccl");
  const bool with_nccl = true;
#else
  const bool with_nccl = false;
#endif

  nvtxRangePushA("static");
  touch_static<<<64, 256, 0, stream>>>(1);
  CHECK(cudaStreamSynchronize(stream));
  nvtxRangePop();

  nvtxRangePushA("cudaMalloc");
  std::vector<void*> plain(3);
  for (void*& p : plain) {
    CHECK(cudaMalloc(&p, 256 * kMiB));
    Hold(256 * kMiB);
  }
  CHECK(cudaFree(plain[2]));
  Hold(-256 * static_cast<int64_t>(kMiB));
  nvtxRangePop();
  Mark("cudaMalloc");

  nvtxRangePushA("default pool");
  cudaMemPool_t default_pool;
  CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  std::vector<void*> async(4);
  for (void*& p : async) {
    CHECK(cudaMallocAsync(&p, 64 * kMiB, stream));
    Hold(64 * kMiB);
  }
  for (int i = 2; i < 4; ++i) {
    CHECK(cudaFreeAsync(async[i], stream));
    Hold(-64 * static_cast<int64_t>(kMiB));
  }
  CHECK(cudaStreamSynchronize(stream));
  nvtxRangePop();
  Mark("default pool");
  const PoolFigures default_after = Figures(default_pool);

  nvtxRangePushA("explicit pool");
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  std::vector<void*> pooled(8);
  for (void*& p : pooled) {
    CHECK(cudaMallocFromPoolAsync(&p, 32 * kMiB, pool, stream));
    Hold(32 * kMiB);
  }
  CHECK(cudaStreamSynchronize(stream));
  Mark("explicit pool full");
  for (void* p : pooled) {
    CHECK(cudaFreeAsync(p, stream));
    Hold(-32 * static_cast<int64_t>(kMiB));
  }
  CHECK(cudaStreamSynchronize(stream));
  const PoolFigures explicit_freed = Figures(pool);
  Mark("explicit pool freed");
  CHECK(cudaMemPoolTrimTo(pool, 0));
  const PoolFigures explicit_trimmed = Figures(pool);
  CHECK(cudaMemPoolDestroy(pool));
  nvtxRangePop();
  Mark("explicit pool destroyed");

  nvtxRangePushA("end");
  for (int i = 0; i < 2; ++i) {
    CHECK(cudaFreeAsync(async[i], stream));
    Hold(-64 * static_cast<int64_t>(kMiB));
  }
  CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < 2; ++i) {
    CHECK(cudaFree(plain[i]));
    Hold(-256 * static_cast<int64_t>(kMiB));
  }
#ifdef SIGHTLINE_WITH_NCCL
  CHECK(cudaFree(buf));
  Hold(-16 * static_cast<int64_t>(kMiB));
  ncclCommDestroy(comm);
#endif
  CHECK(cudaStreamDestroy(stream));
  nvtxRangePop();
  Mark("end");
  const PoolFigures default_end = Figures(default_pool);

  auto pool_json = [](const PoolFigures& f) {
    char b[200];
    std::snprintf(b, sizeof b,
                  "{\"reserved\": %llu, \"used\": %llu, \"reserved_high\": %llu, "
                  "\"used_high\": %llu}",
                  static_cast<unsigned long long>(f.reserved),
                  static_cast<unsigned long long>(f.used),
                  static_cast<unsigned long long>(f.reserved_high),
                  static_cast<unsigned long long>(f.used_high));
    return std::string(b);
  };
  std::printf(
      "{\"program_peak\": %lld, \"static_bytes\": %zu, \"nccl\": %s, \"marks\": [%s], "
      "\"default_pool_after_phase\": %s, \"default_pool_end\": %s, "
      "\"explicit_pool_freed\": %s, \"explicit_pool_trimmed\": %s}\n",
      static_cast<long long>(g_peak), kMiB, with_nccl ? "true" : "false", g_marks.c_str(),
      pool_json(default_after).c_str(), pool_json(default_end).c_str(),
      pool_json(explicit_freed).c_str(), pool_json(explicit_trimmed).c_str());
  return 0;
}
