/* Sightline all-reduce library for inference runtimes (libsightline_allreduce, CMake target
 * sightline::allreduce; docs/allreduce.md, section "Library"): the harness's custom one-shot,
 * two-shot and Lamport all-reduce kernels over CUDA IPC, optionally fused with residual add +
 * RMSNorm (+ FP8 / NVFP4 quantization), and NCCL, behind one call that picks the strategy from the
 * tuned lookup table.
 *
 * One process per GPU, all ranks on one host (CUDA IPC), at most 8 ranks. A communicator is
 * created collectively, from an NCCL communicator the runtime already has or from the launcher's
 * environment (Open MPI, PMI, Slurm, torchrun); creation allocates the library's own workspace
 * (max_bytes per parity and rank, shared with the peers through CUDA IPC), so the runtime's input
 * and output buffers are ordinary device memory and need no registration. Calls on one
 * communicator must be made in the same order with the same sizes on every rank (as with NCCL),
 * with the communicator's device current, may be captured in CUDA graphs, and need nothing from the
 * host between calls. Fused calls take at most max_bytes (every strategy: NCCL's sum goes through
 * a scratch buffer of that size); plain calls above it run NCCL.
 *
 * Strategy: SIGHTLINE_AR_STRATEGY_AUTO takes the table's choice for (world size, fusion, hidden
 * size, tokens), unless the environment variable SIGHTLINE_ALLREDUCE_STRATEGY (nccl, oneshot,
 * twoshot, lamport or auto; read at creation, the same on every rank) overrides it; a choice the
 * kernels cannot take (message above max_bytes, Lamport off or another dtype, a size not a multiple
 * of 16 bytes) falls back to the next one that can, ending with NCCL. An explicit strategy argument
 * is used as given, or the call fails with SIGHTLINE_AR_ERROR_UNSUPPORTED.
 *
 * Errors: every function returns a status; sightline_ar_last_error() holds the message of the
 * latest failure on the calling thread. No function throws or exits.
 */
#ifndef SIGHTLINE_ALLREDUCE_H_
#define SIGHTLINE_ALLREDUCE_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define SIGHTLINE_AR_API
#else
#define SIGHTLINE_AR_API __attribute__((visibility("default")))
#endif

/* cudaStream_t and ncclComm_t without their headers. */
struct CUstream_st;
struct ncclComm;

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SIGHTLINE_AR_SUCCESS = 0,
  SIGHTLINE_AR_ERROR_INVALID_ARGUMENT = 1, /* a null pointer, a bad size or name */
  SIGHTLINE_AR_ERROR_UNSUPPORTED = 2,      /* the kernel asked for cannot take this call */
  SIGHTLINE_AR_ERROR_CUDA = 3,          /* a CUDA call failed (message: call, error, file:line) */
  SIGHTLINE_AR_ERROR_NCCL = 4,          /* an NCCL call failed */
  SIGHTLINE_AR_ERROR_BOOTSTRAP = 5,     /* the ranks could not meet (no launcher, timeout) */
  SIGHTLINE_AR_ERROR_DEVICE_TIMEOUT = 6 /* a kernel's wait for a peer gave up */
} sightline_ar_status;

typedef enum {
  SIGHTLINE_AR_BF16 = 0,
  SIGHTLINE_AR_FP16 = 1,
  SIGHTLINE_AR_FP32 = 2
} sightline_ar_dtype;

typedef enum {
  SIGHTLINE_AR_STRATEGY_AUTO = -1, /* the tuned table (or SIGHTLINE_ALLREDUCE_STRATEGY) */
  SIGHTLINE_AR_STRATEGY_NCCL = 0,
  SIGHTLINE_AR_STRATEGY_ONESHOT = 1,
  SIGHTLINE_AR_STRATEGY_TWOSHOT = 2,
  SIGHTLINE_AR_STRATEGY_LAMPORT = 3 /* unfused only, up to lamport_max_bytes, lamport_dtype only */
} sightline_ar_strategy;

typedef enum {
  SIGHTLINE_AR_FUSION_NONE = 0,
  SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM = 1,
  SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8 = 2,           /* + FP8 E4M3, per-tensor scale */
  SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8_PER_TOKEN = 3, /* + FP8 E4M3, per-token scales */
  SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4 = 4          /* + NVFP4, swizzled block scales */
} sightline_ar_fusion;

typedef struct {
  size_t max_bytes; /* largest message (custom kernels; NCCL takes any size). Default 64 MiB */
  size_t lamport_max_bytes; /* largest Lamport message; 0 turns Lamport off. Default 1 MiB */
  sightline_ar_dtype lamport_dtype; /* the dtype whose Lamport buffers are prepared. Default bf16 */
  double timeout_s; /* device waits and the rendezvous give up after this. Default 60 */
} sightline_ar_config;

typedef struct sightline_ar_comm sightline_ar_comm;

/* The defaults above. */
SIGHTLINE_AR_API void sightline_ar_config_init(sightline_ar_config* config);

/* Collective over the NCCL communicator's ranks: uses its rank, size and device (the current
 * device must be the communicator's), exchanges the workspaces through it, and uses it for the NCCL
 * strategy. The NCCL communicator must outlive the returned one. config may be NULL (defaults). */
SIGHTLINE_AR_API sightline_ar_status sightline_ar_comm_init_nccl(struct ncclComm* nccl,
                                                                 const sightline_ar_config* config,
                                                                 sightline_ar_comm** comm);
/* Collective over the launcher's ranks (OMPI_COMM_WORLD_*, PMI_*, SLURM_*, or torchrun's RANK /
 * WORLD_SIZE / LOCAL_RANK): selects GPU local_rank, meets the other ranks through POSIX shared
 * memory named after the job, and creates an NCCL communicator of its own. Ranks must create their
 * communicators in the same order. */
SIGHTLINE_AR_API sightline_ar_status sightline_ar_comm_init_env(const sightline_ar_config* config,
                                                                sightline_ar_comm** comm);
/* Not collective; call after the last call's work has finished. NULL is fine. */
SIGHTLINE_AR_API void sightline_ar_comm_destroy(sightline_ar_comm* comm);

SIGHTLINE_AR_API int sightline_ar_comm_rank(const sightline_ar_comm* comm);
SIGHTLINE_AR_API int sightline_ar_comm_world_size(const sightline_ar_comm* comm);
SIGHTLINE_AR_API int sightline_ar_comm_device(const sightline_ar_comm* comm);

/* out[i] = sum over ranks of in[i], `count` elements, enqueued on `stream`. in == out is allowed.
 * hidden_size (0: unknown) only steers the table's choice, which is looked up per (hidden size,
 * tokens = count / hidden size); unknown, the message is taken as rows of 4096 elements. Counts
 * beyond 2^48 elements and hidden sizes beyond 2^31 (here, and tokens x hidden_size in fused
 * calls) are SIGHTLINE_AR_ERROR_INVALID_ARGUMENT. */
SIGHTLINE_AR_API sightline_ar_status sightline_ar_allreduce(
    sightline_ar_comm* comm, const void* in, void* out, size_t count, sightline_ar_dtype dtype,
    size_t hidden_size, sightline_ar_strategy strategy, struct CUstream_st* stream);

/* The decoder-layer epilogue: s = allreduce(x); residual_out = s + residual;
 * out = residual_out * rsqrt(mean(residual_out^2) + eps) * gamma per row of hidden_size elements;
 * the quantizing fusions also write quant_values (and quant_scales) from out rounded to the dtype
 * (docs/allreduce.md, "Quantizing epilogues"); out may then be NULL. All pointers are device
 * memory; gamma holds hidden_size elements of the dtype. */
typedef struct {
  sightline_ar_fusion fusion;
  const void* x;
  const void* residual;
  const void* gamma;
  void* out;
  void* residual_out;
  size_t tokens;
  size_t hidden_size;
  float eps;                   /* 1e-6 is usual */
  void* quant_values;          /* FP8: tokens x hidden bytes; NVFP4: tokens x hidden / 2 */
  void* quant_scales;          /* FP8 per token: tokens floats; NVFP4: swizzled E4M3 block scales */
  const float* quant_scale_in; /* device: FP8 per-tensor dequantization scale, NVFP4 global scale */
} sightline_ar_fused_args;

SIGHTLINE_AR_API sightline_ar_status sightline_ar_allreduce_fused(
    sightline_ar_comm* comm, const sightline_ar_fused_args* args, sightline_ar_dtype dtype,
    sightline_ar_strategy strategy, struct CUstream_st* stream);

/* What an AUTO call with these arguments would run (count = tokens x hidden for fused calls), and
 * what the latest call on this communicator ran. */
SIGHTLINE_AR_API sightline_ar_strategy sightline_ar_choose(const sightline_ar_comm* comm,
                                                           sightline_ar_fusion fusion, size_t count,
                                                           sightline_ar_dtype dtype,
                                                           size_t hidden_size);
SIGHTLINE_AR_API sightline_ar_strategy sightline_ar_last_strategy(const sightline_ar_comm* comm);

/* After the stream's work has finished: SIGHTLINE_AR_ERROR_DEVICE_TIMEOUT (and a message naming
 * the rank that did not arrive) when a kernel's wait for a peer gave up; its output is then wrong.
 */
SIGHTLINE_AR_API sightline_ar_status sightline_ar_check_device(sightline_ar_comm* comm);

/* The message of the calling thread's latest failure ("" when none). */
SIGHTLINE_AR_API const char* sightline_ar_last_error(void);
SIGHTLINE_AR_API const char* sightline_ar_status_name(sightline_ar_status status);
/* "nccl", "oneshot", "twoshot", "lamport", "auto"; parse: 0 on success, -1 for an unknown name. */
SIGHTLINE_AR_API const char* sightline_ar_strategy_name(sightline_ar_strategy strategy);
SIGHTLINE_AR_API int sightline_ar_parse_strategy(const char* name, sightline_ar_strategy* strategy);
SIGHTLINE_AR_API const char* sightline_ar_fusion_name(sightline_ar_fusion fusion);

#ifdef __cplusplus
}  // extern "C"

#include <string>

namespace sightline {

/* The C API, owned: `AllReduce ar; if (!ar.InitFromNccl(nccl)) die(ar.error());`. */
class AllReduce {
 public:
  AllReduce() = default;
  AllReduce(const AllReduce&) = delete;
  AllReduce& operator=(const AllReduce&) = delete;
  AllReduce(AllReduce&& o) noexcept : comm_(o.comm_) { o.comm_ = nullptr; }
  ~AllReduce() { sightline_ar_comm_destroy(comm_); }

  static sightline_ar_config DefaultConfig() {
    sightline_ar_config c;
    sightline_ar_config_init(&c);
    return c;
  }
  bool InitFromNccl(ncclComm* nccl, const sightline_ar_config& config = DefaultConfig()) {
    return Ok(sightline_ar_comm_init_nccl(nccl, &config, &comm_));
  }
  bool InitFromEnv(const sightline_ar_config& config = DefaultConfig()) {
    return Ok(sightline_ar_comm_init_env(&config, &comm_));
  }
  bool Run(const void* in, void* out, size_t count, sightline_ar_dtype dtype, CUstream_st* stream,
           size_t hidden_size = 0, sightline_ar_strategy s = SIGHTLINE_AR_STRATEGY_AUTO) {
    return Ok(sightline_ar_allreduce(comm_, in, out, count, dtype, hidden_size, s, stream));
  }
  bool RunFused(const sightline_ar_fused_args& args, sightline_ar_dtype dtype, CUstream_st* stream,
                sightline_ar_strategy s = SIGHTLINE_AR_STRATEGY_AUTO) {
    return Ok(sightline_ar_allreduce_fused(comm_, &args, dtype, s, stream));
  }
  sightline_ar_status status() const { return status_; }
  const std::string& error() const { return error_; }
  sightline_ar_comm* get() const { return comm_; }

 private:
  bool Ok(sightline_ar_status s) {
    status_ = s;
    error_ = s == SIGHTLINE_AR_SUCCESS ? "" : sightline_ar_last_error();
    return s == SIGHTLINE_AR_SUCCESS;
  }
  sightline_ar_comm* comm_ = nullptr;
  sightline_ar_status status_ = SIGHTLINE_AR_SUCCESS;
  std::string error_;
};

}  // namespace sightline
#endif  // __cplusplus

#endif  // SIGHTLINE_ALLREDUCE_H_
