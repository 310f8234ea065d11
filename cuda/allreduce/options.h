// Command-line options of sightline-allreduce-bench and the list of configurations they select.
// Parsing is plain C++ (no CLI library) because the GPU machines build this with the CUDA toolkit
// alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm.h"

namespace sightline::allreduce {

enum class Strategy { kNccl, kOneShot, kTwoShot, kLamport };
enum class Fusion { kNone, kResidualRmsNorm };
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
  bool check_only = false;                   // verify every configuration, time nothing
  bool peer_bw = false;                      // measure the peer copy bandwidth first
  bool pull = false;  // pull kernels (remote loads) instead of push (remote stores)
  PeerOrder peer_order = PeerOrder::kSpread;  // two-shot's order of visiting peers
  std::string output;                         // CSV path (rank 0); "" = stdout
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
