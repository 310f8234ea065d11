// sightline-allreduce-lib-test: libsightline_allreduce on GPUs (mpirun -n 2 or more, one rank per
// GPU; label gpu). Every fusion at a few shapes, eager and in a CUDA graph, AUTO and each explicit
// strategy, checked with the harness's checks (check.cu: exact sums of small integers, the fused
// epilogue against its formula, the quantized bytes against the CPU reference) and against NCCL:
// the test's own ncclAllReduce of the same input must give the same bits as the library's
// unfused output, and the library's NCCL path of each fusion passes the same checks. Then the
// override (SIGHTLINE_ALLREDUCE_STRATEGY, at creation), the fallbacks, the errors, a communicator
// created from the launcher's environment, and a timing table: AUTO against NCCL in CUDA graphs.
// Exit code 0 when every check passed on every rank, 1 when one failed, 2 without a launcher.
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
#include "quant_check.h"
#include "sightline/allreduce.h"
#include "sightline/gpu_check.h"

namespace sightline::allreduce {
namespace {

#define CHECK(...) SIGHTLINE_GPU_CHECK_OR(gpu::ExitOnError, __VA_ARGS__)

constexpr float kFp8Scale = 0.25f;
constexpr float kNvfp4Scale = 16.0f;

struct Test {
  int rank = 0, world = 1;
  Bootstrap* boot = nullptr;
  ncclComm_t nccl = nullptr;
  sightline_ar_comm* ar = nullptr;
  cudaStream_t stream = nullptr;
  int failures = 0, checks = 0;
  // Buffers, max_bytes each.
  void *x = nullptr, *ref = nullptr, *out = nullptr, *resout = nullptr, *residual = nullptr,
       *gamma = nullptr, *qvals = nullptr, *qscales = nullptr;
  float* scales_in = nullptr;  // device {kFp8Scale, kNvfp4Scale}
  CheckResult* check = nullptr;
};

void Failed(Test& t, const std::string& what) {
  ++t.failures;
  std::fprintf(stderr, "rank %d: FAIL: %s\n", t.rank, what.c_str());
}

Dtype ToDtype(sightline_ar_dtype d) {
  return d == SIGHTLINE_AR_FP32   ? Dtype::kFp32
         : d == SIGHTLINE_AR_FP16 ? Dtype::kFp16
                                  : Dtype::kBf16;
}
ncclDataType_t NcclType(sightline_ar_dtype d) {
  return d == SIGHTLINE_AR_FP32 ? ncclFloat32 : d == SIGHTLINE_AR_FP16 ? ncclFloat16 : ncclBfloat16;
}
Quant QuantOf(sightline_ar_fusion f) {
  return f == SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8             ? Quant::kFp8
         : f == SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_FP8_PER_TOKEN ? Quant::kFp8PerToken
         : f == SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4         ? Quant::kNvfp4
                                                                   : Quant::kNone;
}

// A fused call over the test's buffers (quantized outputs added by the caller).
sightline_ar_fused_args FusedCall(const Test& t, sightline_ar_fusion fusion, size_t tokens,
                                  size_t hidden) {
  sightline_ar_fused_args a{};
  a.fusion = fusion;
  a.x = t.x;
  a.residual = t.residual;
  a.gamma = t.gamma;
  a.out = t.out;
  a.residual_out = t.resout;
  a.tokens = tokens;
  a.hidden_size = hidden;
  a.eps = 1e-6f;
  return a;
}

// Hashes agree on every rank (the bits are identical everywhere).
bool SameOnAllRanks(Test& t, unsigned long long hash) {
  std::vector<char> all;
  std::string err;
  if (!t.boot->AllGather(&hash, sizeof(hash), &all, &err)) {
    std::fprintf(stderr, "rank %d: %s\n", t.rank, err.c_str());
    std::exit(1);
  }
  const auto* hs = reinterpret_cast<const unsigned long long*>(all.data());
  for (int p = 0; p < t.world; ++p)
    if (hs[p] != hs[0]) return false;
  return true;
}

// Runs `calls` (one call each on inputs seed, seed+1 ... in turn) eagerly or captured in a graph.
template <typename Fn>
void RunCalls(Test& t, bool graph, Fn&& call) {
  if (!graph) {
    call();
    return;
  }
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(t.stream, cudaStreamCaptureModeGlobal));
  call();
  call();  // twice in the graph: the second call of a replay must not see stale state
  CHECK(cudaStreamEndCapture(t.stream, &g));
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  for (int rep = 0; rep < 2; ++rep) CHECK(cudaGraphLaunch(exec, t.stream));
  CHECK(cudaStreamSynchronize(t.stream));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
}

std::string Label(const char* what, sightline_ar_dtype d, sightline_ar_strategy s, bool graph,
                  size_t a, size_t b = 0) {
  const char* dn = d == SIGHTLINE_AR_FP32 ? "fp32" : d == SIGHTLINE_AR_FP16 ? "fp16" : "bf16";
  return std::string(what) + " " + dn + " " + sightline_ar_strategy_name(s) +
         (graph ? " graph " : " eager ") + std::to_string(a) + (b ? "x" + std::to_string(b) : "");
}

// Unfused: the library's output against the exact sum and against the test's own ncclAllReduce.
void TestPlain(Test& t, sightline_ar_dtype d, size_t count, sightline_ar_strategy s, bool graph,
               uint32_t seed, bool in_place = false) {
  const std::string label =
      Label(in_place ? "allreduce(in place)" : "allreduce", d, s, graph, count);
  ++t.checks;
  const size_t bytes = count * DtypeBytes(ToDtype(d));
  CHECK(LaunchFillInput(ToDtype(d), t.x, count, t.rank, seed, t.stream));
  CHECK(cudaMemsetAsync(t.out, 0xff, bytes, t.stream));
  CHECK(ncclAllReduce(t.x, t.ref, count, NcclType(d), ncclSum, t.nccl, t.stream));
  void* dst = in_place ? t.x : t.out;
  sightline_ar_status st = SIGHTLINE_AR_SUCCESS;
  RunCalls(t, graph && !in_place, [&] {
    if (st == SIGHTLINE_AR_SUCCESS)
      st = sightline_ar_allreduce(t.ar, in_place ? t.x : t.x, dst, count, d, 0, s, t.stream);
  });
  if (st != SIGHTLINE_AR_SUCCESS) {
    Failed(t, label + ": " + sightline_ar_last_error());
    return;
  }
  const sightline_ar_strategy ran = sightline_ar_last_strategy(t.ar);
  CHECK(cudaMemsetAsync(t.check, 0, 2 * sizeof(CheckResult), t.stream));
  CHECK(LaunchCheckSum(ToDtype(d), dst, count, t.world, seed, t.check, t.stream));
  CHECK(LaunchCheckSum(ToDtype(d), t.ref, count, t.world, seed, t.check + 1, t.stream));
  CheckResult r[2];
  CHECK(cudaMemcpyAsync(r, t.check, sizeof(r), cudaMemcpyDeviceToHost, t.stream));
  CHECK(cudaStreamSynchronize(t.stream));
  if (sightline_ar_check_device(t.ar) != SIGHTLINE_AR_SUCCESS)
    Failed(t, label + ": " + sightline_ar_last_error());
  else if (r[0].mismatches != 0)
    Failed(t, label + " (ran " + sightline_ar_strategy_name(ran) +
                  "): " + std::to_string(r[0].mismatches) + " wrong elements, e.g. element " +
                  std::to_string(r[0].first_bad) + " = " + std::to_string(r[0].got) +
                  ", expected " + std::to_string(r[0].want));
  else if (r[1].mismatches != 0)
    Failed(t, label + ": NCCL's own result is wrong");
  else if (r[0].hash != r[1].hash)
    Failed(t, label + " (ran " + sightline_ar_strategy_name(ran) +
                  "): bits differ from ncclAllReduce's");
  if (!SameOnAllRanks(t, r[0].hash)) Failed(t, label + ": ranks disagree");
  if (t.rank == 0 && s == SIGHTLINE_AR_STRATEGY_AUTO && !graph)
    std::printf("  %-40s auto ran %s\n", label.c_str(), sightline_ar_strategy_name(ran));
}

// Fused: residual_out exact and out within the harness's tolerance of the formula; quantizing
// fusions also write out (TensorRT-LLM's *_OUT_QUANT_*), and their bytes must be the CPU
// reference's quantization of that out.
void TestFused(Test& t, sightline_ar_fusion f, sightline_ar_dtype d, size_t tokens, size_t hidden,
               sightline_ar_strategy s, bool graph, uint32_t seed) {
  const std::string label = Label(sightline_ar_fusion_name(f), d, s, graph, tokens, hidden);
  ++t.checks;
  const Dtype dt = ToDtype(d);
  const Quant q = QuantOf(f);
  const bool wide = q != Quant::kNone;
  const size_t count = tokens * hidden;
  const size_t bytes = count * DtypeBytes(dt);
  const int64_t vbytes =
      q == Quant::kNone ? 0 : static_cast<int64_t>(tokens) * QuantRowBytes(q, hidden);
  const int64_t sbytes = q == Quant::kNone ? 0 : QuantScaleBytes(q, tokens, hidden);
  CHECK(LaunchFillInput(dt, t.x, count, t.rank, seed, t.stream));
  CHECK(LaunchFillResidualGamma(dt, t.residual, t.gamma, tokens, hidden, wide, t.stream));
  CHECK(cudaMemsetAsync(t.out, 0xff, bytes, t.stream));
  CHECK(cudaMemsetAsync(t.resout, 0xff, bytes, t.stream));
  if (vbytes > 0) CHECK(cudaMemsetAsync(t.qvals, 0xff, vbytes, t.stream));
  if (sbytes > 0) CHECK(cudaMemsetAsync(t.qscales, 0xff, sbytes, t.stream));
  sightline_ar_fused_args a = FusedCall(t, f, tokens, hidden);
  if (q != Quant::kNone) {
    a.quant_values = t.qvals;
    a.quant_scales = q == Quant::kFp8 ? nullptr : t.qscales;
    a.quant_scale_in = q == Quant::kNvfp4 ? t.scales_in + 1
                       : q == Quant::kFp8 ? t.scales_in
                                          : nullptr;
  }
  sightline_ar_status st = SIGHTLINE_AR_SUCCESS;
  RunCalls(t, graph, [&] {
    if (st == SIGHTLINE_AR_SUCCESS) st = sightline_ar_allreduce_fused(t.ar, &a, d, s, t.stream);
  });
  if (st != SIGHTLINE_AR_SUCCESS) {
    Failed(t, label + ": " + sightline_ar_last_error());
    return;
  }
  const sightline_ar_strategy ran = sightline_ar_last_strategy(t.ar);
  FusedArgs fa;
  fa.x = t.x;
  fa.residual = t.residual;
  fa.gamma = t.gamma;
  fa.out = t.out;
  fa.residual_out = t.resout;
  fa.tokens = tokens;
  fa.hidden = hidden;
  CHECK(cudaMemsetAsync(t.check, 0, sizeof(CheckResult), t.stream));
  CHECK(LaunchCheckFused(dt, fa, wide, t.world, seed, t.check, t.stream));
  CheckResult r;
  CHECK(cudaMemcpyAsync(&r, t.check, sizeof(r), cudaMemcpyDeviceToHost, t.stream));
  QuantRowsOnHost h;
  if (q != Quant::kNone) {
    h.rows = QuantCheckRows(tokens, 0);
    h.norm.resize(bytes);
    h.values.resize(vbytes);
    h.scales.resize(sbytes);
    h.scale_fill = 0xff;
    CHECK(cudaMemcpyAsync(h.norm.data(), t.out, bytes, cudaMemcpyDeviceToHost, t.stream));
    CHECK(cudaMemcpyAsync(h.values.data(), t.qvals, vbytes, cudaMemcpyDeviceToHost, t.stream));
    if (sbytes > 0)
      CHECK(cudaMemcpyAsync(h.scales.data(), t.qscales, sbytes, cudaMemcpyDeviceToHost, t.stream));
  }
  CHECK(cudaStreamSynchronize(t.stream));
  if (sightline_ar_check_device(t.ar) != SIGHTLINE_AR_SUCCESS) {
    Failed(t, label + ": " + sightline_ar_last_error());
  } else if (r.mismatches != 0) {
    Failed(t, label + " (ran " + sightline_ar_strategy_name(ran) +
                  "): " + std::to_string(r.mismatches) +
                  " elements off the formula, e.g. element " + std::to_string(r.first_bad) + " = " +
                  std::to_string(r.got) + ", expected " + std::to_string(r.want));
  } else if (q != Quant::kNone) {
    const std::string diff =
        CompareQuantRows(dt, q, tokens, hidden, q == Quant::kNvfp4 ? kNvfp4Scale : kFp8Scale, h);
    if (!diff.empty()) Failed(t, label + ": quantized bytes: " + diff);
  }
  if (!SameOnAllRanks(t, r.hash)) Failed(t, label + ": ranks disagree");
  if (t.rank == 0 && s == SIGHTLINE_AR_STRATEGY_AUTO && !graph)
    std::printf("  %-40s auto ran %s\n", label.c_str(), sightline_ar_strategy_name(ran));
}

void Expect(Test& t, bool ok, const std::string& what) {
  ++t.checks;
  if (!ok) Failed(t, what);
}

// Median time per call (us) of `calls` calls captured in a graph, slowest rank.
template <typename Fn>
double TimeGraph(Test& t, Fn&& one_call) {
  constexpr int kCalls = 20;
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(t.stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kCalls; ++i) one_call();
  CHECK(cudaStreamEndCapture(t.stream, &g));
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<double> us;
  for (int rep = 0; rep < 9; ++rep) {
    std::string err;
    t.boot->Barrier(&err);
    CHECK(cudaEventRecord(e0, t.stream));
    CHECK(cudaGraphLaunch(exec, t.stream));
    CHECK(cudaEventRecord(e1, t.stream));
    CHECK(cudaStreamSynchronize(t.stream));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep >= 2) us.push_back(ms * 1e3 / kCalls);
  }
  std::sort(us.begin(), us.end());
  double med = us[us.size() / 2];
  std::vector<char> all;
  std::string err;
  t.boot->AllGather(&med, sizeof(med), &all, &err);
  for (int p = 0; p < t.world; ++p)
    med = std::max(med, reinterpret_cast<const double*>(all.data())[p]);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  return med;
}

int Main() {
  const LaunchEnv env = ReadLaunchEnv();
  if (!env.found || env.world < 2) {
    std::fprintf(stderr, "error: start with mpirun -n 2 (or more, one rank per GPU)\n");
    return 2;
  }
  Test t;
  t.rank = env.rank;
  t.world = env.world;
  CHECK(cudaSetDevice(env.local_rank));
  std::string err;
  std::unique_ptr<Bootstrap> boot(
      Bootstrap::Open(env.job_id + ":libtest", t.rank, t.world, 120, &err));
  if (!boot) {
    std::fprintf(stderr, "rank %d: %s\n", t.rank, err.c_str());
    return 1;
  }
  t.boot = boot.get();
  // The test's own NCCL communicator: the reference, and what the library is created from.
  ncclUniqueId id{};
  if (t.rank == 0) CHECK(ncclGetUniqueId(&id));
  std::vector<char> all;
  if (!t.boot->AllGather(&id, sizeof(id), &all, &err)) return 1;
  std::memcpy(&id, all.data(), sizeof(id));
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  CHECK(ncclCommInitRank(&t.nccl, t.world, id, t.rank));
  CHECK(cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking));
  sightline_ar_config cfg;
  sightline_ar_config_init(&cfg);
  cfg.max_bytes = size_t{64} << 20;
  unsetenv("SIGHTLINE_ALLREDUCE_STRATEGY");
  if (sightline_ar_comm_init_nccl(t.nccl, &cfg, &t.ar) != SIGHTLINE_AR_SUCCESS) {
    std::fprintf(stderr, "rank %d: init: %s\n", t.rank, sightline_ar_last_error());
    return 1;
  }
  const size_t cap = cfg.max_bytes + (size_t{1} << 20);  // room for the over-size fallback test
  for (void** p : {&t.x, &t.ref, &t.out, &t.resout, &t.residual, &t.gamma, &t.qvals, &t.qscales})
    CHECK(cudaMalloc(p, cap));
  const float scales[2] = {kFp8Scale, kNvfp4Scale};
  CHECK(cudaMalloc(&t.scales_in, sizeof(scales)));
  CHECK(cudaMemcpy(t.scales_in, scales, sizeof(scales), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&t.check, 4 * sizeof(CheckResult)));

  const sightline_ar_strategy kAll[] = {
      SIGHTLINE_AR_STRATEGY_AUTO, SIGHTLINE_AR_STRATEGY_NCCL, SIGHTLINE_AR_STRATEGY_ONESHOT,
      SIGHTLINE_AR_STRATEGY_TWOSHOT, SIGHTLINE_AR_STRATEGY_LAMPORT};
  uint32_t seed = 1;
  if (t.rank == 0) std::printf("plain all-reduce, bf16, every strategy, eager and graph:\n");
  for (size_t count : {size_t{512}, size_t{64} << 10, size_t{512} << 10, (size_t{3} << 20) + 64,
                       size_t{16} << 20}) {
    for (sightline_ar_strategy s : kAll) {
      const bool lamport_fits = count * 2 <= cfg.lamport_max_bytes;
      if (s == SIGHTLINE_AR_STRATEGY_LAMPORT && !lamport_fits) continue;
      for (bool graph : {false, true}) TestPlain(t, SIGHTLINE_AR_BF16, count, s, graph, seed += 2);
    }
  }
  for (sightline_ar_dtype d : {SIGHTLINE_AR_FP16, SIGHTLINE_AR_FP32}) {
    for (sightline_ar_strategy s : {SIGHTLINE_AR_STRATEGY_AUTO, SIGHTLINE_AR_STRATEGY_ONESHOT,
                                    SIGHTLINE_AR_STRATEGY_TWOSHOT}) {
      for (bool graph : {false, true}) TestPlain(t, d, size_t{1} << 20, s, graph, seed += 2);
    }
  }
  for (sightline_ar_strategy s : kAll) {
    if (s != SIGHTLINE_AR_STRATEGY_AUTO)
      TestPlain(t, SIGHTLINE_AR_BF16, 4096, s, false, seed += 2, true);
  }
  if (t.rank == 0)
    std::printf("fused, every fusion, auto/nccl/oneshot/twoshot, eager and graph:\n");
  struct Shape {
    size_t tokens, hidden;
    sightline_ar_dtype dtype;
  };
  const Shape shapes[] = {{1, 4096, SIGHTLINE_AR_BF16},   {16, 4096, SIGHTLINE_AR_BF16},
                          {333, 2048, SIGHTLINE_AR_BF16}, {1024, 8192, SIGHTLINE_AR_BF16},
                          {64, 1024, SIGHTLINE_AR_FP16},  {8, 512, SIGHTLINE_AR_FP32}};
  for (int fi = SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM;
       fi <= SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4; ++fi) {
    const auto f = static_cast<sightline_ar_fusion>(fi);
    for (const Shape& sh : shapes) {
      for (sightline_ar_strategy s : kAll) {
        if (s == SIGHTLINE_AR_STRATEGY_LAMPORT) continue;
        for (bool graph : {false, true})
          TestFused(t, f, sh.dtype, sh.tokens, sh.hidden, s, graph, seed += 2);
      }
    }
  }

  if (t.rank == 0) std::printf("fallbacks, errors, the override:\n");
  sightline_ar_status st;
  // Above max_bytes: AUTO falls back to NCCL; an explicit one-shot is refused.
  TestPlain(t, SIGHTLINE_AR_BF16, (cfg.max_bytes + (size_t{512} << 10)) / 2,
            SIGHTLINE_AR_STRATEGY_AUTO, false, seed += 2);
  Expect(t, sightline_ar_last_strategy(t.ar) == SIGHTLINE_AR_STRATEGY_NCCL,
         "over max_bytes: auto did not fall back to nccl");
  st = sightline_ar_allreduce(t.ar, t.x, t.out, cfg.max_bytes, SIGHTLINE_AR_BF16, 0,
                              SIGHTLINE_AR_STRATEGY_ONESHOT, t.stream);
  Expect(t,
         st == SIGHTLINE_AR_ERROR_UNSUPPORTED &&
             std::strstr(sightline_ar_last_error(), "staging buffer"),
         std::string("over max_bytes: explicit oneshot: ") + sightline_ar_status_name(st) + ": " +
             sightline_ar_last_error());
  // Not a multiple of 16 bytes: AUTO runs NCCL.
  TestPlain(t, SIGHTLINE_AR_BF16, 1001, SIGHTLINE_AR_STRATEGY_AUTO, false, seed += 2);
  Expect(t, sightline_ar_last_strategy(t.ar) == SIGHTLINE_AR_STRATEGY_NCCL,
         "1001 elements: auto did not run nccl");
  // Lamport buffers are bf16's: an explicit fp32 Lamport call is refused.
  st = sightline_ar_allreduce(t.ar, t.x, t.out, 1024, SIGHTLINE_AR_FP32, 0,
                              SIGHTLINE_AR_STRATEGY_LAMPORT, t.stream);
  Expect(t, st == SIGHTLINE_AR_ERROR_UNSUPPORTED, "fp32 lamport was not refused");
  st = sightline_ar_allreduce(t.ar, nullptr, t.out, 1024, SIGHTLINE_AR_BF16, 0,
                              SIGHTLINE_AR_STRATEGY_AUTO, t.stream);
  Expect(t, st == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "a NULL input was not refused");
  st = sightline_ar_allreduce(t.ar, t.x, t.out, 1024, static_cast<sightline_ar_dtype>(7), 0,
                              SIGHTLINE_AR_STRATEGY_AUTO, t.stream);
  Expect(t, st == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT, "a bad dtype was not refused");
  // The override: read at creation; AUTO calls take it, explicit arguments still win.
  setenv("SIGHTLINE_ALLREDUCE_STRATEGY", "TwoShot", 1);
  sightline_ar_comm* over = nullptr;
  st = sightline_ar_comm_init_nccl(t.nccl, &cfg, &over);
  Expect(t, st == SIGHTLINE_AR_SUCCESS,
         std::string("init with the override: ") + sightline_ar_last_error());
  if (over != nullptr) {
    std::swap(t.ar, over);
    for (bool graph : {false, true})
      TestPlain(t, SIGHTLINE_AR_BF16, 4096, SIGHTLINE_AR_STRATEGY_AUTO, graph, seed += 2);
    Expect(t, sightline_ar_last_strategy(t.ar) == SIGHTLINE_AR_STRATEGY_TWOSHOT,
           "override twoshot: auto did not run twoshot");
    TestFused(t, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM, SIGHTLINE_AR_BF16, 4, 4096,
              SIGHTLINE_AR_STRATEGY_AUTO, false, seed += 2);
    Expect(t, sightline_ar_last_strategy(t.ar) == SIGHTLINE_AR_STRATEGY_TWOSHOT,
           "override twoshot: fused auto did not run twoshot");
    TestPlain(t, SIGHTLINE_AR_BF16, 4096, SIGHTLINE_AR_STRATEGY_ONESHOT, false, seed += 2);
    Expect(t, sightline_ar_last_strategy(t.ar) == SIGHTLINE_AR_STRATEGY_ONESHOT,
           "override: an explicit oneshot did not run oneshot");
    std::swap(t.ar, over);
    CHECK(cudaDeviceSynchronize());
    sightline_ar_comm_destroy(over);
  }
  setenv("SIGHTLINE_ALLREDUCE_STRATEGY", "one-shot", 1);
  over = nullptr;
  st = sightline_ar_comm_init_nccl(t.nccl, &cfg, &over);
  Expect(t,
         st == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT && over == nullptr &&
             std::strstr(sightline_ar_last_error(), "SIGHTLINE_ALLREDUCE_STRATEGY=one-shot"),
         std::string("a bad override was not refused: ") + sightline_ar_last_error());
  unsetenv("SIGHTLINE_ALLREDUCE_STRATEGY");
  // A communicator from the launcher's environment (its own NCCL communicator).
  sightline_ar_comm* from_env = nullptr;
  st = sightline_ar_comm_init_env(&cfg, &from_env);
  Expect(t, st == SIGHTLINE_AR_SUCCESS,
         std::string("init from the environment: ") + sightline_ar_last_error());
  if (from_env != nullptr) {
    std::swap(t.ar, from_env);
    Expect(t,
           sightline_ar_comm_rank(t.ar) == t.rank && sightline_ar_comm_world_size(t.ar) == t.world,
           "env communicator: wrong rank or size");
    for (sightline_ar_strategy s : kAll)
      TestPlain(t, SIGHTLINE_AR_BF16, 64 << 10, s, true, seed += 2);
    TestFused(t, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4, SIGHTLINE_AR_BF16, 128, 4096,
              SIGHTLINE_AR_STRATEGY_AUTO, true, seed += 2);
    std::swap(t.ar, from_env);
    CHECK(cudaDeviceSynchronize());
    sightline_ar_comm_destroy(from_env);
  }

  // Timing: AUTO (the table's choice) against NCCL, bf16, CUDA graphs of 20 calls.
  if (t.rank == 0)
    std::printf(
        "\ntiming (bf16, CUDA graph of 20 calls, median us per call, slowest rank):\n"
        "%12s %-26s %10s %10s %10s %8s\n",
        "bytes", "call", "auto runs", "auto us", "nccl us", "nccl/auto");
  for (size_t bytes : {size_t{8} << 10, size_t{256} << 10, size_t{4} << 20, size_t{64} << 20}) {
    const size_t count = bytes / 2;
    CHECK(LaunchFillInput(Dtype::kBf16, t.x, count, t.rank, 1, t.stream));
    const sightline_ar_strategy chosen =
        sightline_ar_choose(t.ar, SIGHTLINE_AR_FUSION_NONE, count, SIGHTLINE_AR_BF16, 0);
    const double a = TimeGraph(t, [&] {
      sightline_ar_allreduce(t.ar, t.x, t.out, count, SIGHTLINE_AR_BF16, 0,
                             SIGHTLINE_AR_STRATEGY_AUTO, t.stream);
    });
    const double n = TimeGraph(t, [&] {
      sightline_ar_allreduce(t.ar, t.x, t.out, count, SIGHTLINE_AR_BF16, 0,
                             SIGHTLINE_AR_STRATEGY_NCCL, t.stream);
    });
    if (t.rank == 0)
      std::printf("%12zu %-26s %10s %10.2f %10.2f %7.2fx\n", bytes, "allreduce",
                  sightline_ar_strategy_name(chosen), a, n, n / a);
  }
  for (size_t tokens : {size_t{1}, size_t{128}, size_t{2048}}) {
    const size_t hidden = 4096;
    const sightline_ar_fused_args a =
        FusedCall(t, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM, tokens, hidden);
    CHECK(LaunchFillResidualGamma(Dtype::kBf16, t.residual, t.gamma, tokens, hidden, false,
                                  t.stream));
    const sightline_ar_strategy chosen =
        sightline_ar_choose(t.ar, a.fusion, tokens * hidden, SIGHTLINE_AR_BF16, hidden);
    const double ta = TimeGraph(t, [&] {
      sightline_ar_allreduce_fused(t.ar, &a, SIGHTLINE_AR_BF16, SIGHTLINE_AR_STRATEGY_AUTO,
                                   t.stream);
    });
    const double tn = TimeGraph(t, [&] {
      sightline_ar_allreduce_fused(t.ar, &a, SIGHTLINE_AR_BF16, SIGHTLINE_AR_STRATEGY_NCCL,
                                   t.stream);
    });
    if (t.rank == 0) {
      const std::string call = "residual_rmsnorm " + std::to_string(tokens) + "x4096";
      std::printf("%12zu %-26s %10s %10.2f %10.2f %7.2fx\n", tokens * hidden * 2, call.c_str(),
                  sightline_ar_strategy_name(chosen), ta, tn, tn / ta);
    }
  }

  CHECK(cudaDeviceSynchronize());
  int failures = t.failures;
  t.boot->AllGather(&failures, sizeof(failures), &all, &err);
  int total = 0;
  for (int p = 0; p < t.world; ++p) total += reinterpret_cast<const int*>(all.data())[p];
  if (t.rank == 0)
    std::printf("\n%s: %d checks per rank, %d failed (all ranks)\n", total ? "FAILED" : "PASSED",
                t.checks, total);
  sightline_ar_comm_destroy(t.ar);
  ncclCommDestroy(t.nccl);
  return total ? 1 : 0;
}

}  // namespace
}  // namespace sightline::allreduce

int main() { return sightline::allreduce::Main(); }
