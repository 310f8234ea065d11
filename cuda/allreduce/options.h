// Command-line options of sightline-allreduce-bench and the list of configurations they select.
// Parsing is plain C++ (no CLI library) because the GPU machines build this with the CUDA toolkit
// alone.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "comm.h"
#include "kernels.h"

namespace sightline::allreduce {

enum class Strategy { kNccl, kOneShot, kTwoShot, kLamport };
// The epilogues (docs/allreduce.md): none; residual add + RMSNorm; the same + FP8 E4M3 with a
// per-tensor scale, + FP8 with per-token dynamic scales, + NVFP4 (TensorRT-LLM's NONE,
// RESIDUAL_RMS_NORM, RESIDUAL_RMS_NORM_QUANT_FP8 and RESIDUAL_RMS_NORM_QUANT_NVFP4; the per-token
// FP8 variant is ours).
enum class Fusion {
  kNone,
  kResidualRmsNorm,
  kResidualRmsNormFp8,
  kResidualRmsNormFp8PerToken,
  kResidualRmsNormNvfp4
};
inline constexpr Fusion kFusions[] = {
    Fusion::kNone, Fusion::kResidualRmsNorm, Fusion::kResidualRmsNormFp8,
    Fusion::kResidualRmsNormFp8PerToken, Fusion::kResidualRmsNormNvfp4};
inline Quant QuantOf(Fusion f) {
  switch (f) {
    case Fusion::kResidualRmsNormFp8:
      return Quant::kFp8;
    case Fusion::kResidualRmsNormFp8PerToken:
      return Quant::kFp8PerToken;
    case Fusion::kResidualRmsNormNvfp4:
      return Quant::kNvfp4;
    default:
      return Quant::kNone;
  }
}
enum class Mode { kEager, kGraph };
const char* StrategyName(Strategy s);
const char* FusionName(Fusion f);
const char* ModeName(Mode m);
const char* PeerOrderName(PeerOrder o);

struct Options {
  bool help = false;
  bool single = false;  // allow world size 1 without a launcher
  bool grid = false;    // 2-D sweep (hidden x tokens) instead of the size sweep
  int64_t min_bytes = 1024, max_bytes = 256ll << 20;
  int factor = 2;
  int64_t hidden_min = 128, hidden_max = 8192, tokens_min = 1, tokens_max = 16384;
  // --shapes: explicit (tokens, hidden) cells of the 2-D sweep instead of the ranges above.
  std::vector<std::pair<int64_t, int64_t>> shapes;
  std::vector<Dtype> dtypes = {Dtype::kBf16};
  // Lamport takes only unfused sizes up to --lamport-max; other configurations are skipped.
  std::vector<Strategy> strategies = {Strategy::kNccl, Strategy::kOneShot, Strategy::kTwoShot,
                                      Strategy::kLamport};
  std::vector<Fusion> fusions;  // default: none (size sweep), none + residual_rmsnorm (grid)
  std::vector<Mode> modes = {Mode::kEager, Mode::kGraph};
  int iters = 200;        // timed calls per configuration (at most)
  int warmup = 10;        // untimed calls first
  int batch = 10;         // calls per timed sample (eager) / per graph launch (graph)
  double budget_ms = 40;  // time spent timing one configuration, at most (roughly)
  int max_blocks = 128;   // grid cap of the custom kernels
  int64_t one_shot_max_bytes = 256ll << 20;  // one-shot is skipped above this
  int64_t lamport_max_bytes = 1ll << 20;     // Lamport is skipped above this (buffer size)
  double timeout_s = 20;                     // device flag waits and host rendezvous
  // Rows per quantized output compared with the CPU reference when timing (0: all; --check-only
  // compares all rows).
  int64_t quant_check_rows = 256;
  bool check_only = false;  // verify every configuration, time nothing
  bool peer_bw = false;     // measure the peer copy bandwidth first
  bool pull = false;        // pull kernels (remote loads) instead of push (remote stores)
  PeerOrder peer_order = PeerOrder::kSpread;   // two-shot's order of visiting peers
  int pipeline_iters = kDefaultPipelineIters;  // push two-shot's chunk (DeviceComm)
  std::string output;                          // CSV path (rank 0); "" = stdout
  std::string job_id;
};

// Returns "" or a message for a usage error.
std::string ParseOptions(int argc, char** argv, Options* o);
std::string UsageText();

struct Config {
  Dtype dtype;
  int64_t count;   // elements per rank
  int64_t tokens;  // 0 for the size sweep
  int64_t hidden;  // 0 for the size sweep
  Strategy strategy;
  Fusion fusion;
  Mode mode;
  int64_t bytes() const { return count * DtypeBytes(dtype); }
};

// The configurations in run order (identical on every rank).
std::vector<Config> MakeConfigs(const Options& o);
// Bytes of the largest message among them.
int64_t MaxBytes(const std::vector<Config>& configs);

}  // namespace sightline::allreduce
