// What the parts of sightline-allreduce-bench share (harness.cc: the run of each configuration
// and main; harness_run.cc: errors and the meeting of ranks; strategies.cc: each strategy's calls;
// verify.cc: the checks of every result): one rank's Run, and the checks that end a run on an
// error.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap.h"
#include "kernels.h"
#include "options.h"
#include "sightline/gpu_check.h"
#include "watchdog.h"

namespace sightline::allreduce {

// The scales the quantizing fusions are given (docs/allreduce.md, "Quantizing epilogues"): with the
// wide gamma of the test data (check.cu) the largest normalized values saturate and the smallest
// become E4M3 subnormals or zero, and the NVFP4 block scales range from saturated to zero.
inline constexpr float kFp8TensorScale = 0.25f;  // values = E4M3(x * 4)
inline constexpr float kNvfp4GlobalScale = 16.0f;
// What the quantized outputs hold before a call (0xff: an E4M3 NaN and a float NaN, which no
// finite input produces), so that bytes a kernel did not write show.
inline constexpr int kQuantFill = 0xff;
inline constexpr int kNumChecks = 6;  // CheckResult slots in Run::check

struct Run {
  Options opt;
  int rank = 0, world = 1, device = 0;
  std::unique_ptr<Bootstrap> boot;
  std::unique_ptr<Watchdog> watchdog;
  DeviceComm comm;
  DeviceError* host_error = nullptr;
  ncclComm_t nccl = nullptr;
  cudaStream_t stream = nullptr;
  void* comm_alloc = nullptr;
  void* in[2] = {};
  void* out[2] = {};
  void* resout[2] = {};
  void* sum = nullptr;
  void* residual = nullptr;
  void* gamma = nullptr;
  void* qvals[2] = {};           // quantized values of the quantizing fusions
  void* qscales[2] = {};         // their per-token or block scales
  float* qscale_in = nullptr;    // device: {kFp8TensorScale, kNvfp4GlobalScale}
  int64_t qscale_cap = 0;        // bytes of each qscales buffer
  CheckResult* check = nullptr;  // device, kNumChecks entries
  int lamport_dtype = -1;        // the dtype whose sentinel fills the Lamport region (-1: none)
  std::string csv;
};
// The run of this process, for Fatal (set by main).
extern Run* g_run;

// Ends the run: the message on stderr (and, on rank 0, the rows measured so far beside the output),
// the rendezvous segment removed, exit 1.
[[noreturn]] void Fatal(const std::string& msg);

// CUDA and NCCL calls: a failure ends the run like any other error, naming the call and file:line.
void FatalGpuError(const gpu::GpuError& e);
#define CHECK(...) SIGHTLINE_GPU_CHECK_OR(FatalGpuError, __VA_ARGS__)

// A device flag wait that timed out (DeviceError) ends the run, naming the rank that did not
// arrive.
void CheckDeviceError(Run& r);
// Waits for the stream; `what` names the step in the error.
void Sync(Run& r, const char* what);
// Every rank's `bytes` from `mine`, in rank order, into `all`.
void AllGather(Run& r, const void* mine, size_t bytes, std::vector<char>* all);
ncclDataType_t NcclType(Dtype d);
// The configuration in words, for messages: "bf16 size=4096 oneshot none graph".
std::string Describe(const Config& c);

// Each strategy's part (strategies.cc), one entry per Strategy: why a configuration is skipped
// ("" when it runs), and how one call of it is enqueued on input/output pair k (a quantizing
// fusion writes the normalized row only with norm_out, as the check calls do).
struct StrategyOps {
  Strategy strategy;
  std::string (*skip_reason)(const Run& r, const Config& c);
  void (*enqueue)(Run& r, const Config& c, int k, bool norm_out);
};
const StrategyOps& OpsOf(Strategy s);
inline std::string SkipReason(const Run& r, const Config& c) {
  return OpsOf(c.strategy).skip_reason(r, c);
}
inline void Enqueue(Run& r, const Config& c, int k, bool norm_out = false) {
  OpsOf(c.strategy).enqueue(r, c, k, norm_out);
}
// The fused call's arguments for input/output pair k.
FusedArgs FusedFor(const Run& r, const Config& c, int k, bool norm_out = false);

// The checks (verify.cc). Verify: out[0] (seed) and out[1] (seed + 1) on every rank, and the ranks'
// output hashes (the quantizing fusions: their values and scales too). CompareWithNccl: the custom
// kernels' out[0] against ncclAllReduce of in[0], bit for bit.
void Verify(Run& r, const Config& c, uint32_t seed, const char* when);
void CompareWithNccl(Run& r, const Config& c, uint32_t seed);

}  // namespace sightline::allreduce
