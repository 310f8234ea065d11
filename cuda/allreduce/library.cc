// libsightline_allreduce (include/sightline/allreduce.h): the harness's kernels (kernels.h) behind
// a communicator a runtime creates once, with the strategy of each call chosen on the host
// (src/shared/ar_select.h: the tuned table, the override, the kernels' limits). The workspace
// is the harness's IPC buffer (comm.h), exchanged through NCCL or through the bootstrap segment.
#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap.h"
#include "kernels.h"
#include "shared/ar_select.h"
#include "sightline/allreduce.h"
#include "sightline/gpu_check.h"

struct sightline_ar_comm {
  sightline::allreduce::DeviceComm dev;
  int device = 0;
  int max_blocks = 1;
  ncclComm_t nccl = nullptr;
  bool own_nccl = false;
  std::unique_ptr<sightline::allreduce::Bootstrap> boot;  // init from the environment only
  void* workspace = nullptr;                              // this rank's IPC allocation
  void* scratch = nullptr;  // the NCCL strategy's sum before the fused epilogue (max_bytes)
  sightline::allreduce::DeviceError* host_error = nullptr;
  sightline_ar_config config{};
  sightline_ar_strategy env_override = SIGHTLINE_AR_STRATEGY_AUTO;
  std::atomic<int> last = SIGHTLINE_AR_STRATEGY_NCCL;
};

namespace sightline::allreduce {
namespace {

thread_local std::string t_error;

sightline_ar_status Fail(sightline_ar_status s, std::string message) {
  t_error = std::move(message);
  return s;
}

// CUDA and NCCL calls inside functions returning sightline_ar_status: a failure returns, with the
// call, the error string and file:line as the message.
#define AR_CUDA(...)                                                                               \
  do {                                                                                             \
    sightline_ar_status ar_status_ = SIGHTLINE_AR_SUCCESS;                                         \
    SIGHTLINE_GPU_CHECK_OR(                                                                        \
        [&](const sightline::gpu::GpuError& e) {                                                   \
          ar_status_ = Fail(                                                                       \
              std::strcmp(e.api, "NCCL") == 0 ? SIGHTLINE_AR_ERROR_NCCL : SIGHTLINE_AR_ERROR_CUDA, \
              e.Describe());                                                                       \
        },                                                                                         \
        __VA_ARGS__);                                                                              \
    if (ar_status_ != SIGHTLINE_AR_SUCCESS) return ar_status_;                                     \
  } while (0)

Dtype ToDtype(sightline_ar_dtype d) {
  return d == SIGHTLINE_AR_FP32   ? Dtype::kFp32
         : d == SIGHTLINE_AR_FP16 ? Dtype::kFp16
                                  : Dtype::kBf16;
}
ncclDataType_t NcclType(sightline_ar_dtype d) {
  return d == SIGHTLINE_AR_FP32 ? ncclFloat32 : d == SIGHTLINE_AR_FP16 ? ncclFloat16 : ncclBfloat16;
}
bool ValidDtype(sightline_ar_dtype d) {
  return d == SIGHTLINE_AR_BF16 || d == SIGHTLINE_AR_FP16 || d == SIGHTLINE_AR_FP32;
}
bool ValidStrategy(sightline_ar_strategy s) {
  return s >= SIGHTLINE_AR_STRATEGY_AUTO && s <= SIGHTLINE_AR_STRATEGY_LAMPORT;
}
Quant QuantOf(sightline_ar_fusion f) {
  switch (f) {
    case SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8:
      return Quant::kFp8;
    case SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8_PER_TOKEN:
      return Quant::kFp8PerToken;
    case SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4:
      return Quant::kNvfp4;
    default:
      return Quant::kNone;
  }
}

// What every rank publishes at creation.
struct Hello {
  cudaIpcMemHandle_t handle;
  ncclUniqueId id;  // rank 0's, for an environment-created communicator
  int device;
  int sms;
  uint64_t host;  // hash of the host name: CUDA IPC needs one host
};

uint64_t HostHash() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  uint64_t h = 1469598103934665603ull;
  for (const char* p = name; *p != '\0'; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  return h;
}

sightline_ar_status CheckConfig(const sightline_ar_config& c) {
  if (c.max_bytes == 0 || c.max_bytes > (size_t{1} << 34))
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "max_bytes must be 1 .. 16 GiB");
  if (c.lamport_max_bytes > (size_t{256} << 20))
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "lamport_max_bytes must be at most 256 MiB");
  if (!ValidDtype(c.lamport_dtype))
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "lamport_dtype is not a sightline_ar_dtype");
  if (!(c.timeout_s > 0))
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "timeout_s must be positive");
  return SIGHTLINE_AR_SUCCESS;
}

// Everything before the exchange: the override, the device, the workspace (flags zeroed), the
// device-error word, this rank's Hello.
sightline_ar_status Prepare(sightline_ar_comm* c, int rank, int world, int device, Hello* hello) {
  std::string error;
  if (!ParseStrategyOverride(std::getenv("SIGHTLINE_ALLREDUCE_STRATEGY"), &c->env_override,
                             &error)) {
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, error);
  }
  if (world < 1 || world > kMaxRanks) {
    return Fail(SIGHTLINE_AR_ERROR_UNSUPPORTED, "world size " + std::to_string(world) +
                                                    ": at most " + std::to_string(kMaxRanks) +
                                                    " ranks are supported");
  }
  c->device = device;
  AR_CUDA(cudaSetDevice(device));
  AR_CUDA(cudaDeviceGetAttribute(&c->max_blocks, cudaDevAttrMultiProcessorCount, device));
  // Flag barriers need every block resident: one block per multiprocessor at most (as the harness).
  c->max_blocks = std::min(c->max_blocks, kMaxBlocks);
  const int64_t cap = static_cast<int64_t>((c->config.max_bytes + 255) / 256 * 256);
  const int64_t lamport_cap =
      std::min<int64_t>(cap, static_cast<int64_t>((c->config.lamport_max_bytes + 255) / 256 * 256));
  AR_CUDA(cudaMalloc(&c->workspace, CommAllocBytes(cap, world, lamport_cap)));
  AR_CUDA(cudaMemset(c->workspace, 0, kHeaderBytes));
  AR_CUDA(cudaMalloc(&c->scratch, static_cast<size_t>(cap)));
  AR_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&c->host_error), sizeof(DeviceError),
                        cudaHostAllocMapped));
  std::memset(static_cast<void*>(c->host_error), 0, sizeof(DeviceError));
  DeviceError* dev_error = nullptr;
  AR_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_error), c->host_error, 0));
  c->dev.rank = rank;
  c->dev.world = world;
  c->dev.cap_bytes = cap;
  c->dev.lamport_cap_bytes = lamport_cap;
  c->dev.timeout_ns = static_cast<uint64_t>(c->config.timeout_s * 1e9);
  c->dev.error = dev_error;
  c->dev.push = true;
  c->dev.peer_order = PeerOrder::kSpread;
  AR_CUDA(cudaIpcGetMemHandle(&hello->handle, c->workspace));
  hello->device = device;
  hello->sms = c->max_blocks;
  hello->host = HostHash();
  AR_CUDA(cudaDeviceSynchronize());  // the zeroed flags are in place before any peer sees them
  return SIGHTLINE_AR_SUCCESS;
}

// After the exchange: open the peers' workspaces. All ranks take the smallest multiprocessor count
// as their grid cap, so that they launch the same grids.
sightline_ar_status OpenPeers(sightline_ar_comm* c, const Hello* all) {
  for (int p = 0; p < c->dev.world; ++p) {
    c->max_blocks = std::min(c->max_blocks, all[p].sms);
    if (p == c->dev.rank) {
      c->dev.base[p] = static_cast<char*>(c->workspace);
      continue;
    }
    if (all[p].host != all[c->dev.rank].host)
      return Fail(SIGHTLINE_AR_ERROR_UNSUPPORTED,
                  "rank " + std::to_string(p) +
                      " runs on another host: all ranks must share one "
                      "host (CUDA IPC)");
    if (all[p].device == c->device)
      return Fail(SIGHTLINE_AR_ERROR_UNSUPPORTED, "ranks " + std::to_string(p) + " and " +
                                                      std::to_string(c->dev.rank) + " share GPU " +
                                                      std::to_string(c->device));
    int can = 0;
    AR_CUDA(cudaDeviceCanAccessPeer(&can, c->device, all[p].device));
    if (!can)
      return Fail(SIGHTLINE_AR_ERROR_UNSUPPORTED,
                  "GPU " + std::to_string(c->device) + " cannot access GPU " +
                      std::to_string(all[p].device) + " as a peer (no NVLink/P2P)");
    void* ptr = nullptr;
    AR_CUDA(cudaIpcOpenMemHandle(&ptr, all[p].handle, cudaIpcMemLazyEnablePeerAccess));
    c->dev.base[p] = static_cast<char*>(ptr);
  }
  // The Lamport buffers hold the sentinel of lamport_dtype before any peer can write them: the
  // caller's barrier after this orders it.
  if (c->dev.lamport_cap_bytes > 0) {
    AR_CUDA(LaunchLamportReset(c->dev, ToDtype(c->config.lamport_dtype), nullptr));
    AR_CUDA(cudaDeviceSynchronize());
  }
  return SIGHTLINE_AR_SUCCESS;
}

// Why strategy s cannot take the call ("" when it can).
std::string Fits(const sightline_ar_comm* c, sightline_ar_fusion fusion, sightline_ar_dtype dtype,
                 int64_t count, int64_t hidden, sightline_ar_strategy s) {
  const Dtype d = ToDtype(dtype);
  if (fusion != SIGHTLINE_AR_FUSION_NONE) {
    if (s == SIGHTLINE_AR_STRATEGY_LAMPORT) return "Lamport has no fused variant";
    // The NCCL strategy runs the same row kernels after ncclAllReduce into the scratch buffer.
    return FusedLimit(c->dev, d, count / std::max<int64_t>(1, hidden), hidden, QuantOf(fusion));
  }
  switch (s) {
    case SIGHTLINE_AR_STRATEGY_NCCL:
      return "";
    case SIGHTLINE_AR_STRATEGY_ONESHOT:
      return OneShotLimit(c->dev, d, count);
    case SIGHTLINE_AR_STRATEGY_TWOSHOT:
      return TwoShotLimit(c->dev, d, count);
    case SIGHTLINE_AR_STRATEGY_LAMPORT:
      if (c->dev.lamport_cap_bytes == 0) return "Lamport is off (lamport_max_bytes 0)";
      if (dtype != c->config.lamport_dtype)
        return std::string("Lamport buffers are prepared for ") +
               (c->config.lamport_dtype == SIGHTLINE_AR_FP32   ? "fp32"
                : c->config.lamport_dtype == SIGHTLINE_AR_FP16 ? "fp16"
                                                               : "bf16");
      return LamportLimit(c->dev, d, count);
    case SIGHTLINE_AR_STRATEGY_AUTO:
      break;
  }
  return "not a strategy";
}

sightline_ar_status Choose(const sightline_ar_comm* c, sightline_ar_fusion fusion,
                           sightline_ar_dtype dtype, int64_t count, int64_t hidden,
                           sightline_ar_strategy requested, ArChoice* choice) {
  ArCallShape shape;
  shape.world = c->dev.world;
  shape.fusion = fusion;
  shape.dtype = dtype;
  shape.count = count;
  shape.hidden = hidden;
  std::string error;
  if (!ChooseStrategy(
          shape, requested, c->env_override,
          [&](sightline_ar_strategy s) { return Fits(c, fusion, dtype, count, hidden, s); }, choice,
          &error)) {
    return Fail(SIGHTLINE_AR_ERROR_UNSUPPORTED, error);
  }
  return SIGHTLINE_AR_SUCCESS;
}

sightline_ar_status CheckCall(const sightline_ar_comm* c, sightline_ar_dtype dtype,
                              sightline_ar_strategy strategy) {
  if (c == nullptr) return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "comm is NULL");
  if (!ValidDtype(dtype))
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "dtype is not a sightline_ar_dtype");
  if (!ValidStrategy(strategy))
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "strategy is not a sightline_ar_strategy");
  // The kernels go to the current device: on another one they would read the wrong memory.
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != c->device)
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
                "the current device is " + std::to_string(current) + " but the communicator's is " +
                    std::to_string(c->device));
  return SIGHTLINE_AR_SUCCESS;
}

int g_env_comms = 0;  // environment-created communicators so far: names each one's segment

}  // namespace
}  // namespace sightline::allreduce

using namespace sightline::allreduce;  // NOLINT: the C API's definitions below

extern "C" {

void sightline_ar_config_init(sightline_ar_config* config) {
  if (config == nullptr) return;
  config->max_bytes = size_t{64} << 20;
  config->lamport_max_bytes = size_t{1} << 20;
  config->lamport_dtype = SIGHTLINE_AR_BF16;
  config->timeout_s = 60;
}

sightline_ar_status sightline_ar_comm_init_nccl(ncclComm* nccl, const sightline_ar_config* config,
                                                sightline_ar_comm** comm) {
  if (nccl == nullptr || comm == nullptr)
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "nccl and comm must not be NULL");
  *comm = nullptr;
  auto c = std::make_unique<sightline_ar_comm>();
  sightline_ar_config_init(&c->config);
  if (config != nullptr) c->config = *config;
  if (sightline_ar_status s = CheckConfig(c->config); s != SIGHTLINE_AR_SUCCESS) return s;
  int rank = 0, world = 0, device = 0, current = 0;
  AR_CUDA(ncclCommUserRank(nccl, &rank));
  AR_CUDA(ncclCommCount(nccl, &world));
  AR_CUDA(ncclCommCuDevice(nccl, &device));
  AR_CUDA(cudaGetDevice(&current));
  if (current != device)
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
                "the current device is " + std::to_string(current) +
                    " but the NCCL communicator's is " + std::to_string(device));
  c->nccl = nccl;
  Hello hello{};
  if (sightline_ar_status s = Prepare(c.get(), rank, world, device, &hello);
      s != SIGHTLINE_AR_SUCCESS) {
    sightline_ar_comm_destroy(c.release());
    return s;
  }
  // The exchange through NCCL itself: an all-gather of the Hellos on a stream of our own.
  const auto exchange = [&]() -> sightline_ar_status {
    cudaStream_t stream = nullptr;
    char* dbuf = nullptr;
    AR_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    AR_CUDA(cudaMalloc(&dbuf, sizeof(Hello) * (world + 1)));
    std::vector<Hello> all(world);
    AR_CUDA(cudaMemcpyAsync(dbuf, &hello, sizeof(Hello), cudaMemcpyHostToDevice, stream));
    AR_CUDA(ncclAllGather(dbuf, dbuf + sizeof(Hello), sizeof(Hello), ncclChar, nccl, stream));
    AR_CUDA(cudaMemcpyAsync(all.data(), dbuf + sizeof(Hello), sizeof(Hello) * world,
                            cudaMemcpyDeviceToHost, stream));
    AR_CUDA(cudaStreamSynchronize(stream));
    if (sightline_ar_status s = OpenPeers(c.get(), all.data()); s != SIGHTLINE_AR_SUCCESS) return s;
    // Every rank's Lamport buffers are reset before any rank returns (and so before any call).
    AR_CUDA(ncclAllGather(dbuf, dbuf + sizeof(Hello), sizeof(Hello), ncclChar, nccl, stream));
    AR_CUDA(cudaStreamSynchronize(stream));
    AR_CUDA(cudaFree(dbuf));
    AR_CUDA(cudaStreamDestroy(stream));
    return SIGHTLINE_AR_SUCCESS;
  };
  if (sightline_ar_status s = exchange(); s != SIGHTLINE_AR_SUCCESS) {
    sightline_ar_comm_destroy(c.release());
    return s;
  }
  *comm = c.release();
  return SIGHTLINE_AR_SUCCESS;
}

sightline_ar_status sightline_ar_comm_init_env(const sightline_ar_config* config,
                                               sightline_ar_comm** comm) {
  if (comm == nullptr) return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "comm must not be NULL");
  *comm = nullptr;
  auto c = std::make_unique<sightline_ar_comm>();
  sightline_ar_config_init(&c->config);
  if (config != nullptr) c->config = *config;
  if (sightline_ar_status s = CheckConfig(c->config); s != SIGHTLINE_AR_SUCCESS) return s;
  const LaunchEnv env = ReadLaunchEnv();
  if (!env.found)
    return Fail(SIGHTLINE_AR_ERROR_BOOTSTRAP,
                "no launcher environment (OMPI_COMM_WORLD_*, PMI_*, SLURM_*, or torchrun's RANK / "
                "WORLD_SIZE): start one process per GPU with mpirun, srun or torchrun");
  if (env.local_world != env.world)
    return Fail(SIGHTLINE_AR_ERROR_UNSUPPORTED,
                std::to_string(env.world) + " ranks but " + std::to_string(env.local_world) +
                    " on this host: all ranks must share one host (CUDA IPC)");
  if (env.world > 1 && env.job_id.empty())
    return Fail(SIGHTLINE_AR_ERROR_BOOTSTRAP,
                "the launcher set no job id (PMIX_NAMESPACE, OMPI_MCA_orte_hnp_uri, SLURM_JOB_ID, "
                "TORCHELASTIC_RUN_ID)");
  int ndev = 0;
  AR_CUDA(cudaGetDeviceCount(&ndev));
  if (env.local_rank >= ndev)
    return Fail(SIGHTLINE_AR_ERROR_UNSUPPORTED, "local rank " + std::to_string(env.local_rank) +
                                                    " but only " + std::to_string(ndev) +
                                                    " GPU(s) visible: one rank per GPU");
  std::string error;
  const std::string job = (env.job_id.empty() ? "single-" + std::to_string(getpid()) : env.job_id) +
                          ":lib" + std::to_string(g_env_comms++);
  c->boot.reset(Bootstrap::Open(job, env.rank, env.world, c->config.timeout_s, &error));
  if (!c->boot) return Fail(SIGHTLINE_AR_ERROR_BOOTSTRAP, error);
  Hello hello{};
  const auto create = [&]() -> sightline_ar_status {
    if (sightline_ar_status s = Prepare(c.get(), env.rank, env.world, env.local_rank, &hello);
        s != SIGHTLINE_AR_SUCCESS)
      return s;
    if (env.rank == 0) AR_CUDA(ncclGetUniqueId(&hello.id));
    std::vector<char> all;
    if (!c->boot->AllGather(&hello, sizeof(hello), &all, &error))
      return Fail(SIGHTLINE_AR_ERROR_BOOTSTRAP, error);
    const Hello* hs = reinterpret_cast<const Hello*>(all.data());
    if (sightline_ar_status s = OpenPeers(c.get(), hs); s != SIGHTLINE_AR_SUCCESS) return s;
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast stays off unless asked for
    AR_CUDA(ncclCommInitRank(&c->nccl, env.world, hs[0].id, env.rank));
    c->own_nccl = true;
    if (!c->boot->Barrier(&error)) return Fail(SIGHTLINE_AR_ERROR_BOOTSTRAP, error);
    return SIGHTLINE_AR_SUCCESS;
  };
  if (sightline_ar_status s = create(); s != SIGHTLINE_AR_SUCCESS) {
    sightline_ar_comm_destroy(c.release());
    return s;
  }
  *comm = c.release();
  return SIGHTLINE_AR_SUCCESS;
}

void sightline_ar_comm_destroy(sightline_ar_comm* comm) {
  if (comm == nullptr) return;
  int previous = -1;  // the caller's current device comes back afterwards
  cudaGetDevice(&previous);
  cudaSetDevice(comm->device);
  for (int p = 0; p < comm->dev.world; ++p) {
    if (p != comm->dev.rank && comm->dev.base[p] != nullptr)
      cudaIpcCloseMemHandle(comm->dev.base[p]);
  }
  if (comm->own_nccl && comm->nccl != nullptr) ncclCommDestroy(comm->nccl);
  if (comm->workspace != nullptr) cudaFree(comm->workspace);
  if (comm->scratch != nullptr) cudaFree(comm->scratch);
  if (comm->host_error != nullptr) cudaFreeHost(comm->host_error);
  delete comm;
  if (previous >= 0) cudaSetDevice(previous);
}

int sightline_ar_comm_rank(const sightline_ar_comm* comm) { return comm ? comm->dev.rank : -1; }
int sightline_ar_comm_world_size(const sightline_ar_comm* comm) {
  return comm ? comm->dev.world : -1;
}
int sightline_ar_comm_device(const sightline_ar_comm* comm) { return comm ? comm->device : -1; }

sightline_ar_status sightline_ar_allreduce(sightline_ar_comm* comm, const void* in, void* out,
                                           size_t count, sightline_ar_dtype dtype,
                                           size_t hidden_size, sightline_ar_strategy strategy,
                                           CUstream_st* stream) {
  if (sightline_ar_status s = CheckCall(comm, dtype, strategy); s != SIGHTLINE_AR_SUCCESS) return s;
  if (in == nullptr || out == nullptr)
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "in and out must not be NULL");
  if (std::string e = PlainCallSizeError(count, hidden_size); !e.empty())
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, e);
  const int64_t n = static_cast<int64_t>(count);
  ArChoice choice;
  if (sightline_ar_status s = Choose(comm, SIGHTLINE_AR_FUSION_NONE, dtype, n,
                                     static_cast<int64_t>(hidden_size), strategy, &choice);
      s != SIGHTLINE_AR_SUCCESS)
    return s;
  const Dtype d = ToDtype(dtype);
  switch (choice.strategy) {
    case SIGHTLINE_AR_STRATEGY_ONESHOT:
      AR_CUDA(LaunchOneShot(comm->dev, d, in, out, n, comm->max_blocks, stream));
      break;
    case SIGHTLINE_AR_STRATEGY_TWOSHOT:
      AR_CUDA(LaunchTwoShot(comm->dev, d, in, out, n, comm->max_blocks, stream));
      break;
    case SIGHTLINE_AR_STRATEGY_LAMPORT:
      AR_CUDA(LaunchLamport(comm->dev, d, in, out, n, comm->max_blocks, stream));
      break;
    default:
      AR_CUDA(ncclAllReduce(in, out, count, NcclType(dtype), ncclSum, comm->nccl, stream));
      break;
  }
  comm->last = choice.strategy;
  return SIGHTLINE_AR_SUCCESS;
}

sightline_ar_status sightline_ar_allreduce_fused(sightline_ar_comm* comm,
                                                 const sightline_ar_fused_args* args,
                                                 sightline_ar_dtype dtype,
                                                 sightline_ar_strategy strategy,
                                                 CUstream_st* stream) {
  if (sightline_ar_status s = CheckCall(comm, dtype, strategy); s != SIGHTLINE_AR_SUCCESS) return s;
  if (args == nullptr) return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "args is NULL");
  const sightline_ar_fusion f = args->fusion;
  if (f < SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM || f > SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4)
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
                "args->fusion must be one of the residual_rmsnorm fusions (plain all-reduce: "
                "sightline_ar_allreduce)");
  const Quant q = QuantOf(f);
  if (args->x == nullptr || args->residual == nullptr || args->gamma == nullptr ||
      args->residual_out == nullptr || (q == Quant::kNone && args->out == nullptr))
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
                "x, residual, gamma, residual_out (and out, unless quantizing) must not be NULL");
  if (q != Quant::kNone &&
      (args->quant_values == nullptr || (q != Quant::kFp8 && args->quant_scales == nullptr) ||
       (q != Quant::kFp8PerToken && args->quant_scale_in == nullptr)))
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
                std::string(FusionLabel(f)) + " needs quant_values" +
                    (q != Quant::kFp8 ? ", quant_scales" : "") +
                    (q != Quant::kFp8PerToken ? ", quant_scale_in" : ""));
  if (std::string e = FusedCallSizeError(args->tokens, args->hidden_size); !e.empty())
    return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, e);
  const int64_t tokens = static_cast<int64_t>(args->tokens);
  const int64_t hidden = static_cast<int64_t>(args->hidden_size);
  ArChoice choice;
  if (sightline_ar_status s = Choose(comm, f, dtype, tokens * hidden, hidden, strategy, &choice);
      s != SIGHTLINE_AR_SUCCESS)
    return s;
  FusedArgs a;
  a.x = args->x;
  a.residual = args->residual;
  a.gamma = args->gamma;
  a.out = args->out;
  a.residual_out = args->residual_out;
  a.tokens = tokens;
  a.hidden = hidden;
  a.eps = args->eps;
  a.quant = q;
  a.q.values = args->quant_values;
  a.q.scales = args->quant_scales;
  a.q.scale_in = args->quant_scale_in;
  const Dtype d = ToDtype(dtype);
  if (choice.strategy == SIGHTLINE_AR_STRATEGY_NCCL) {
    AR_CUDA(ncclAllReduce(args->x, comm->scratch, tokens * hidden, NcclType(dtype), ncclSum,
                          comm->nccl, stream));
    a.x = comm->scratch;
    AR_CUDA(LaunchResidualRmsNorm(d, a, stream));
  } else {
    AR_CUDA(LaunchFusedRmsNorm(comm->dev, d, choice.strategy == SIGHTLINE_AR_STRATEGY_TWOSHOT, a,
                               comm->max_blocks, stream));
  }
  comm->last = choice.strategy;
  return SIGHTLINE_AR_SUCCESS;
}

sightline_ar_strategy sightline_ar_choose(const sightline_ar_comm* comm, sightline_ar_fusion fusion,
                                          size_t count, sightline_ar_dtype dtype,
                                          size_t hidden_size) {
  if (comm == nullptr || !ValidDtype(dtype) || !PlainCallSizeError(count, hidden_size).empty())
    return SIGHTLINE_AR_STRATEGY_NCCL;
  ArChoice choice;
  if (Choose(comm, fusion, dtype, static_cast<int64_t>(count), static_cast<int64_t>(hidden_size),
             SIGHTLINE_AR_STRATEGY_AUTO, &choice) != SIGHTLINE_AR_SUCCESS)
    return SIGHTLINE_AR_STRATEGY_NCCL;
  return choice.strategy;
}

sightline_ar_strategy sightline_ar_last_strategy(const sightline_ar_comm* comm) {
  return comm ? static_cast<sightline_ar_strategy>(comm->last.load()) : SIGHTLINE_AR_STRATEGY_NCCL;
}

sightline_ar_status sightline_ar_check_device(sightline_ar_comm* comm) {
  if (comm == nullptr) return Fail(SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "comm is NULL");
  const DeviceError& e = *comm->host_error;
  if (e.code == 0) return SIGHTLINE_AR_SUCCESS;
  const std::string secs = std::to_string(static_cast<int>(comm->config.timeout_s));
  if (e.code == 2)
    return Fail(SIGHTLINE_AR_ERROR_DEVICE_TIMEOUT,
                "Lamport data wait timed out after " + secs + " s: rank " +
                    std::to_string(e.missing_rank) + "'s data did not arrive (block " +
                    std::to_string(e.block) + ")");
  return Fail(SIGHTLINE_AR_ERROR_DEVICE_TIMEOUT,
              "device flag wait timed out after " + secs + " s: rank " +
                  std::to_string(e.missing_rank) + " did not arrive (block " +
                  std::to_string(e.block) + ", expected flag " + std::to_string(e.expected) +
                  ", saw " + std::to_string(e.seen) + ")");
}

const char* sightline_ar_last_error(void) { return t_error.c_str(); }

const char* sightline_ar_status_name(sightline_ar_status status) {
  switch (status) {
    case SIGHTLINE_AR_SUCCESS:
      return "success";
    case SIGHTLINE_AR_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case SIGHTLINE_AR_ERROR_UNSUPPORTED:
      return "unsupported";
    case SIGHTLINE_AR_ERROR_CUDA:
      return "CUDA error";
    case SIGHTLINE_AR_ERROR_NCCL:
      return "NCCL error";
    case SIGHTLINE_AR_ERROR_BOOTSTRAP:
      return "bootstrap error";
    case SIGHTLINE_AR_ERROR_DEVICE_TIMEOUT:
      return "device timeout";
  }
  return "unknown status";
}

const char* sightline_ar_strategy_name(sightline_ar_strategy strategy) {
  return StrategyLabel(strategy);
}

int sightline_ar_parse_strategy(const char* name, sightline_ar_strategy* strategy) {
  if (name == nullptr || strategy == nullptr) return -1;
  return ParseStrategyName(name, strategy) ? 0 : -1;
}

const char* sightline_ar_fusion_name(sightline_ar_fusion fusion) { return FusionLabel(fusion); }

}  // extern "C"
