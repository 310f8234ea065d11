// sightline-allreduce-bench: the nccl-tests-shaped harness around the all-reduce kernels. One
// process per GPU (mpirun / srun); ranks meet through bootstrap.h, share their staging buffers with
// CUDA IPC and run every configuration in the same order. Each configuration is verified (exact
// sums, cross-rank identical bits) before and after it is timed; a wrong result ends the run.
#include "harness.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap.h"
#include "kernels.h"
#include "options.h"
#include "quant_check.h"
#include "sightline/gpu_check.h"
#include "watchdog.h"

namespace sightline::allreduce {
namespace {

// Bus bandwidth as nccl-tests defines it for all-reduce: the busiest link's share.
double BusBandwidth(double algbw, int world) {
  return world > 1 ? algbw * 2.0 * (world - 1) / world : 0.0;
}

// Sets up inputs and outputs, runs the calls to verify (eager: two back-to-back calls on different
// inputs; graph: one launch of the timing graph), verifies, then times. Returns the median time per
// call in microseconds (0 when --check-only).
double RunConfig(Run& r, const Config& c, uint32_t seed) {
  const bool fused = c.fusion != Fusion::kNone;
  const Quant quant = QuantOf(c.fusion);
  if (c.strategy == Strategy::kLamport && r.lamport_dtype != static_cast<int>(c.dtype)) {
    // Every rank's kernels of earlier configurations have finished (Verify synchronised and met
    // the others); no rank may write into a peer's region before that peer has reset it.
    CHECK(LaunchLamportReset(r.comm, c.dtype, r.stream));
    Sync(r, "lamport reset");
    std::string err;
    if (!r.boot->Barrier(&err)) Fatal(err);
    r.lamport_dtype = static_cast<int>(c.dtype);
  }
  for (int k = 0; k < 2; ++k) {
    CHECK(LaunchFillInput(c.dtype, r.in[k], c.count, r.rank, seed + k, r.stream));
    CHECK(cudaMemsetAsync(r.out[k], 0xff, c.bytes(), r.stream));
    if (fused) CHECK(cudaMemsetAsync(r.resout[k], 0xff, c.bytes(), r.stream));
    if (quant != Quant::kNone) {
      CHECK(cudaMemsetAsync(r.qvals[k], kQuantFill, c.tokens * QuantRowBytes(quant, c.hidden),
                            r.stream));
      const int64_t sbytes = QuantScaleBytes(quant, c.tokens, c.hidden);
      if (sbytes > 0) CHECK(cudaMemsetAsync(r.qscales[k], kQuantFill, sbytes, r.stream));
    }
  }
  if (fused) {
    CHECK(LaunchFillResidualGamma(c.dtype, r.residual, r.gamma, c.tokens, c.hidden,
                                  /*wide_gamma=*/quant != Quant::kNone, r.stream));
  }
  const int batch = std::max(2, r.opt.batch);
  cudaGraphExec_t exec = nullptr;
  if (c.mode == Mode::kGraph) {
    Sync(r, "fill");
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeThreadLocal));
    for (int j = 0; j < batch; ++j) Enqueue(r, c, j % 2);
    CHECK(cudaStreamEndCapture(r.stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaGraphLaunch(exec, r.stream));
  } else {
    Enqueue(r, c, 0);
    Enqueue(r, c, 1);
  }
  Verify(r, c, seed, "before timing");
  if (!fused && c.strategy != Strategy::kNccl) CompareWithNccl(r, c, seed);
  double median_us = 0;
  if (!r.opt.check_only) {
    auto sample = [&]() {
      if (exec != nullptr) {
        CHECK(cudaGraphLaunch(exec, r.stream));
      } else {
        for (int j = 0; j < batch; ++j) Enqueue(r, c, j % 2);
      }
    };
    for (int w = 0; w < (r.opt.warmup + batch - 1) / batch; ++w) sample();
    Sync(r, "warm-up");
    std::string err;
    if (!r.boot->Barrier(&err)) Fatal(err);
    // A pilot sample decides how many samples fit the budget; every rank takes the largest count's
    // minimum so that all ranks run the same number of calls.
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaEventRecord(e0, r.stream));
    sample();
    CHECK(cudaEventRecord(e1, r.stream));
    Sync(r, "pilot");
    float pilot_ms = 0;
    CHECK(cudaEventElapsedTime(&pilot_ms, e0, e1));
    std::vector<char> all;
    AllGather(r, &pilot_ms, sizeof(pilot_ms), &all);
    float slowest = 0;
    for (int p = 0; p < r.world; ++p)
      slowest = std::max(slowest, reinterpret_cast<const float*>(all.data())[p]);
    int samples = static_cast<int>(r.opt.budget_ms / std::max(slowest, 1e-3f));
    samples = std::clamp(samples, 3, std::max(3, r.opt.iters / batch));
    std::vector<cudaEvent_t> ev(2 * samples);
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    for (int s = 0; s < samples; ++s) {
      CHECK(cudaEventRecord(ev[2 * s], r.stream));
      sample();
      CHECK(cudaEventRecord(ev[2 * s + 1], r.stream));
    }
    Sync(r, "timing");
    std::vector<double> per_call;
    for (int s = 0; s < samples; ++s) {
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, ev[2 * s], ev[2 * s + 1]));
      per_call.push_back(ms * 1000.0 / batch);
    }
    for (auto& e : ev) cudaEventDestroy(e);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    std::sort(per_call.begin(), per_call.end());
    const size_t n = per_call.size();
    median_us = n % 2 ? per_call[n / 2] : 0.5 * (per_call[n / 2 - 1] + per_call[n / 2]);
    // Rank 0 reports; take the slowest rank's median so that a straggler shows.
    std::vector<char> meds;
    AllGather(r, &median_us, sizeof(median_us), &meds);
    for (int p = 0; p < r.world; ++p)
      median_us = std::max(median_us, reinterpret_cast<const double*>(meds.data())[p]);
    Verify(r, c, seed, "after timing");
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  return median_us;
}

void MeasurePeerBandwidth(Run& r) {
  if (r.world < 2) {
    if (r.rank == 0) std::fprintf(stderr, "peer bandwidth: needs at least 2 ranks, skipped\n");
    return;
  }
  std::string err;
  const size_t bytes = std::min<size_t>(4 * static_cast<size_t>(r.comm.cap_bytes), 1ull << 30);
  for (int dir = 0; r.rank == 0 && dir < 2; ++dir) {
    // dir 0: rank 0 reads rank 1's memory; dir 1: rank 0 writes it.
    char* local = static_cast<char*>(r.comm_alloc) + kHeaderBytes;
    char* remote = r.comm.base[1] + kHeaderBytes;
    char* dst = dir == 0 ? local : remote;
    const char* src = dir == 0 ? remote : local;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<double> gbps;
    for (int i = 0; i < 7; ++i) {
      CHECK(cudaEventRecord(e0, r.stream));
      CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, r.stream));
      CHECK(cudaEventRecord(e1, r.stream));
      Sync(r, "peer copy");
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= 2) gbps.push_back(bytes / (ms * 1e-3) / 1e9);
    }
    std::sort(gbps.begin(), gbps.end());
    std::fprintf(stderr, "peer_copy: rank 0 %s rank 1, %zu bytes, %.1f GB/s (median of %zu)\n",
                 dir == 0 ? "reads" : "writes", bytes, gbps[gbps.size() / 2], gbps.size());
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  if (!r.boot->Barrier(&err)) Fatal(err);
  // Every rank writes the next rank at once (each link busy both ways, as in an all-reduce): the
  // bound of the two-shot kernel, whose every rank moves the whole message across its link once.
  {
    const size_t both = std::min<size_t>(2 * static_cast<size_t>(r.comm.cap_bytes), 1ull << 30);
    const char* src = static_cast<char*>(r.comm_alloc) + kHeaderBytes;
    char* dst = r.comm.base[(r.rank + 1) % r.world] + kHeaderBytes + 3 * r.comm.cap_bytes;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<double> gbps;
    for (int i = 0; i < 7; ++i) {
      if (!r.boot->Barrier(&err)) Fatal(err);
      CHECK(cudaEventRecord(e0, r.stream));
      CHECK(cudaMemcpyAsync(dst, src, both, cudaMemcpyDeviceToDevice, r.stream));
      CHECK(cudaEventRecord(e1, r.stream));
      Sync(r, "peer copy");
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= 2) gbps.push_back(both / (ms * 1e-3) / 1e9);
    }
    std::sort(gbps.begin(), gbps.end());
    double med = gbps[gbps.size() / 2];
    std::vector<char> all;
    AllGather(r, &med, sizeof(med), &all);
    for (int p = 0; p < r.world; ++p) med = std::min(med, reinterpret_cast<double*>(all.data())[p]);
    if (r.rank == 0) {
      std::fprintf(stderr,
                   "peer_copy: every rank writes the next at once, %zu bytes, %.1f GB/s (slowest "
                   "rank's median of 5); link bound (size / that) at 64 MB: %.1f us\n",
                   both, med, 67108864.0 / (med * 1e9) * 1e6);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
}

void SetUp(Run& r, int64_t cap, int64_t max_hidden, int64_t qscale_cap) {
  CHECK(cudaSetDevice(r.device));
  // Flag barriers need every block of a grid resident at once: each kernel fits one block per
  // multiprocessor (__launch_bounds__), so the grid may not exceed the multiprocessor count.
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, r.device));
  r.opt.max_blocks = std::min(r.opt.max_blocks, sms);
  CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  CHECK(cudaHostAlloc(&r.host_error, sizeof(DeviceError), cudaHostAllocMapped));
  std::memset(static_cast<void*>(r.host_error), 0, sizeof(DeviceError));
  DeviceError* dev_error = nullptr;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_error), r.host_error, 0));
  r.watchdog = std::make_unique<Watchdog>(r.rank, r.boot.get(), r.host_error);
  r.watchdog->Arm("setup (IPC and NCCL)", 3 * r.opt.timeout_s + 60);

  const size_t bytes = static_cast<size_t>(cap);
  // The Lamport region only when the strategy is asked for: 3 x world x its cap per GPU.
  int64_t lamport_cap = 0;
  for (Strategy s : r.opt.strategies) {
    if (s == Strategy::kLamport)
      lamport_cap = std::min(cap, (r.opt.lamport_max_bytes + 255) / 256 * 256);
  }
  CHECK(cudaMalloc(&r.comm_alloc, CommAllocBytes(cap, r.world, lamport_cap)));
  CHECK(cudaMemset(r.comm_alloc, 0, kHeaderBytes));
  for (int k = 0; k < 2; ++k) {
    CHECK(cudaMalloc(&r.in[k], bytes));
    CHECK(cudaMalloc(&r.out[k], bytes));
    CHECK(cudaMalloc(&r.resout[k], bytes));
  }
  CHECK(cudaMalloc(&r.sum, bytes));
  CHECK(cudaMalloc(&r.residual, bytes));
  CHECK(cudaMalloc(&r.gamma, 4 * std::max<int64_t>(max_hidden, 16)));
  r.qscale_cap = qscale_cap;
  if (qscale_cap > 0) {
    for (int k = 0; k < 2; ++k) {
      CHECK(cudaMalloc(&r.qvals[k], bytes));
      CHECK(cudaMalloc(&r.qscales[k], qscale_cap));
    }
    const float scales_in[2] = {kFp8TensorScale, kNvfp4GlobalScale};
    CHECK(cudaMalloc(&r.qscale_in, sizeof(scales_in)));
    CHECK(cudaMemcpy(r.qscale_in, scales_in, sizeof(scales_in), cudaMemcpyHostToDevice));
  }
  CHECK(cudaMalloc(&r.check, kNumChecks * sizeof(CheckResult)));
  CHECK(cudaDeviceSynchronize());

  // Exchange IPC handles and the NCCL id (all ranks zeroed their flags before this rendezvous).
  struct Hello {
    cudaIpcMemHandle_t handle;
    ncclUniqueId id;
    int device;
  } hello{};
  CHECK(cudaIpcGetMemHandle(&hello.handle, r.comm_alloc));
  if (r.rank == 0) CHECK(ncclGetUniqueId(&hello.id));
  hello.device = r.device;
  std::vector<char> all;
  AllGather(r, &hello, sizeof(hello), &all);
  const Hello* hs = reinterpret_cast<const Hello*>(all.data());
  r.comm.rank = r.rank;
  r.comm.world = r.world;
  r.comm.cap_bytes = cap;
  r.comm.lamport_cap_bytes = lamport_cap;
  r.comm.timeout_ns = static_cast<uint64_t>(r.opt.timeout_s * 1e9);
  r.comm.error = dev_error;
  r.comm.push = !r.opt.pull;
  r.comm.peer_order = r.opt.peer_order;
  r.comm.pipeline_iters = r.opt.pipeline_iters;
  for (int p = 0; p < r.world; ++p) {
    if (p == r.rank) {
      r.comm.base[p] = static_cast<char*>(r.comm_alloc);
      continue;
    }
    if (hs[p].device == r.device)
      Fatal("ranks " + std::to_string(p) + " and " + std::to_string(r.rank) + " share GPU " +
            std::to_string(r.device));
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, r.device, hs[p].device));
    if (!can)
      Fatal("GPU " + std::to_string(r.device) + " cannot access GPU " +
            std::to_string(hs[p].device) + " as a peer (no NVLink/P2P)");
    void* ptr = nullptr;
    CHECK(cudaIpcOpenMemHandle(&ptr, hs[p].handle, cudaIpcMemLazyEnablePeerAccess));
    r.comm.base[p] = static_cast<char*>(ptr);
  }
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast stays off on shared hosts
  CHECK(ncclCommInitRank(&r.nccl, r.world, hs[0].id, r.rank));
  std::string err;
  if (!r.boot->Barrier(&err)) Fatal(err);
  r.watchdog->Disarm();
}

int Main(int argc, char** argv) {
  Options opt;
  const std::string usage_error = ParseOptions(argc, argv, &opt);
  if (opt.help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  if (!usage_error.empty()) {
    std::fprintf(stderr, "error: %s\n", usage_error.c_str());
    return 2;
  }
  LaunchEnv env = ReadLaunchEnv();
  if (!env.found && !opt.single) {
    std::fprintf(stderr,
                 "error: no MPI environment: launch one process per GPU with `mpirun -n N "
                 "sightline-allreduce-bench ...` (or srun / a PMI launcher), or pass --single to "
                 "run as world size 1\n");
    return 2;
  }
  if (env.world > kMaxRanks) {
    std::fprintf(stderr, "error: world size %d: at most %d ranks are supported\n", env.world,
                 kMaxRanks);
    return 2;
  }
  if (env.local_world != env.world) {
    std::fprintf(stderr,
                 "error: %d ranks but %d on this host: all ranks must share one host (CUDA IPC)\n",
                 env.world, env.local_world);
    return 2;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "rank %d: error: no CUDA device visible\n", env.rank);
    return 2;
  }
  if (env.world > ndev) {
    std::fprintf(stderr,
                 "rank %d: error: world size %d but only %d GPU(s) visible: run at most %d ranks "
                 "(one per GPU)\n",
                 env.rank, env.world, ndev, ndev);
    return 2;
  }
  std::string job = !opt.job_id.empty() ? opt.job_id : env.job_id;
  if (job.empty()) {
    if (env.world > 1) {
      std::fprintf(stderr,
                   "error: the launcher set no job id (PMIX_NAMESPACE, OMPI_MCA_orte_hnp_uri, "
                   "SLURM_JOB_ID); pass the same --job-id to every rank\n");
      return 2;
    }
    job = "single-" + std::to_string(getpid());
  }

  Run r;
  g_run = &r;
  r.opt = opt;
  r.rank = env.rank;
  r.world = env.world;
  r.device = env.local_rank;
  std::string err;
  r.boot.reset(Bootstrap::Open(job, r.rank, r.world, opt.timeout_s + 30, &err));
  if (!r.boot) Fatal(err);

  const std::vector<Config> configs = MakeConfigs(opt);
  const int64_t cap = (MaxBytes(configs) + 255) / 256 * 256;
  int64_t qscale_cap = 0;  // 0: no quantizing fusion, no quantized buffers
  int64_t max_hidden = 0;
  for (const Config& c : configs) {
    max_hidden = std::max(max_hidden, c.hidden);
    const Quant q = QuantOf(c.fusion);
    if (q != Quant::kNone)
      qscale_cap = std::max<int64_t>({qscale_cap, 16, QuantScaleBytes(q, c.tokens, c.hidden)});
  }
  SetUp(r, cap, max_hidden, qscale_cap);
  if (r.rank == 0) {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, r.device);
    int nccl_version = 0;
    ncclGetVersion(&nccl_version);
    std::fprintf(stderr,
                 "allreduce bench: world size %d (%s), %s, NCCL %d, %s kernels, peer order %s, "
                 "two-shot pipeline %d, %zu configurations%s\n",
                 r.world, env.found ? env.source.c_str() : "--single", prop.name, nccl_version,
                 opt.pull ? "pull" : "push", PeerOrderName(opt.peer_order), opt.pipeline_iters,
                 configs.size(),
                 r.comm.lamport_cap_bytes > 0
                     ? (", Lamport slots of " + std::to_string(r.comm.lamport_cap_bytes) +
                        " bytes (3 buffers x world)")
                           .c_str()
                     : "");
  }
  if (opt.peer_bw) MeasurePeerBandwidth(r);

  r.csv =
      "world_size,dtype,size_bytes,num_tokens,hidden_size,strategy,fusion,mode,time_us,"
      "algbw_gbps,busbw_gbps\n";
  int skipped = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const std::string skip = SkipReason(r, c);
    if (!skip.empty()) {
      ++skipped;
      if (r.rank == 0) std::fprintf(stderr, "skip: %s (%s)\n", Describe(c).c_str(), skip.c_str());
      continue;
    }
    r.watchdog->Arm(Describe(c), 2 * opt.timeout_s + 30 + opt.budget_ms * 1e-3 * 4);
    const double us = RunConfig(r, c, static_cast<uint32_t>(2 * i + 1));
    r.watchdog->Disarm();
    if (r.rank == 0) {
      const double algbw = us > 0 ? c.bytes() / (us * 1e-6) / 1e9 : 0;
      char line[256];
      std::snprintf(line, sizeof(line), "%d,%s,%lld,%lld,%lld,%s,%s,%s,%.3f,%.3f,%.3f\n", r.world,
                    DtypeName(c.dtype), static_cast<long long>(c.bytes()),
                    static_cast<long long>(c.tokens), static_cast<long long>(c.hidden),
                    StrategyName(c.strategy), FusionName(c.fusion), ModeName(c.mode), us, algbw,
                    BusBandwidth(algbw, r.world));
      if (!opt.check_only) r.csv += line;
      std::fprintf(stderr, "[%zu/%zu] %s: %s\n", i + 1, configs.size(), Describe(c).c_str(),
                   opt.check_only ? "verified"
                                  : (std::to_string(us) + " us, busbw " +
                                     std::to_string(BusBandwidth(algbw, r.world)) + " GB/s")
                                        .c_str());
    }
  }
  if (!r.boot->Barrier(&err)) Fatal(err);
  if (r.rank == 0) {
    std::fprintf(stderr, "done: %zu configurations verified%s, %d skipped\n",
                 configs.size() - skipped, opt.check_only ? "" : " and timed", skipped);
    if (opt.output.empty()) {
      std::fputs(r.csv.c_str(), stdout);
    } else if (!opt.check_only) {
      const std::string tmp = opt.output + ".tmp";
      FILE* f = std::fopen(tmp.c_str(), "w");
      if (f == nullptr || std::fputs(r.csv.c_str(), f) < 0 || std::fclose(f) != 0 ||
          std::rename(tmp.c_str(), opt.output.c_str()) != 0) {
        Fatal("cannot write " + opt.output + ": " + std::strerror(errno));
      }
    }
  }
  ncclCommDestroy(r.nccl);
  for (int p = 0; p < r.world; ++p)
    if (p != r.rank) cudaIpcCloseMemHandle(r.comm.base[p]);
  r.watchdog.reset();
  r.boot.reset();
  g_run = nullptr;
  return 0;
}

}  // namespace
}  // namespace sightline::allreduce

int main(int argc, char** argv) { return sightline::allreduce::Main(argc, argv); }
