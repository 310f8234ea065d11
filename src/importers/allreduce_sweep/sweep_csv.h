// The all-reduce sweep CSV (written by `sightline allreduce bench`, read by `tune` and `plot`):
// one row per measured configuration. docs/allreduce.md#csv-format defines the columns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sightline {

// The strategy and fusion values of the CSV. Kept apart from the generated header's
// sightline::allreduce::Strategy so that a program may include both.
// kLamport: the barrier-free one-shot for small unfused messages (cuda/allreduce/lamport.cu).
enum class ArStrategy { kNccl, kOneShot, kTwoShot, kLamport };
// Fusions: none; residual add + RMSNorm; the same + FP8 E4M3 (per-tensor scale), + FP8 with
// per-token scales, + NVFP4 (docs/allreduce.md, "Quantizing epilogues").
enum class ArFusion {
  kNone,
  kResidualRmsNorm,
  kResidualRmsNormFp8,
  kResidualRmsNormFp8PerToken,
  kResidualRmsNormNvfp4
};
enum class ArMode { kEager, kGraph };

// In tie-break order: an exact tie goes to the earlier (simpler) strategy.
inline constexpr ArStrategy kArStrategies[] = {ArStrategy::kNccl, ArStrategy::kOneShot,
                                               ArStrategy::kTwoShot, ArStrategy::kLamport};
inline constexpr int kNumArStrategies = 4;
inline constexpr ArFusion kArFusions[] = {
    ArFusion::kNone, ArFusion::kResidualRmsNorm, ArFusion::kResidualRmsNormFp8,
    ArFusion::kResidualRmsNormFp8PerToken, ArFusion::kResidualRmsNormNvfp4};

// The CSV spellings: "nccl", "oneshot", "twoshot", "lamport"; "none", "residual_rmsnorm",
// "residual_rmsnorm_fp8", "residual_rmsnorm_fp8_per_token", "residual_rmsnorm_nvfp4"; "eager",
// "graph".
std::string_view ArStrategyName(ArStrategy s);
std::string_view ArFusionName(ArFusion f);
std::string_view ArModeName(ArMode m);
// For labels: "NCCL", "one-shot", "two-shot", "Lamport".
std::string_view ArStrategyLabel(ArStrategy s);

// Bytes per element of a dtype ("bf16", "fp16", "fp32"), or 0 when unknown.
int ArDtypeBytes(std::string_view dtype);

inline constexpr std::string_view kSweepCsvHeader =
    "world_size,dtype,size_bytes,num_tokens,hidden_size,strategy,fusion,mode,time_us,algbw_gbps,"
    "busbw_gbps";

struct SweepRow {
  int world_size = 0;
  std::string dtype;
  int64_t size_bytes = 0;
  int64_t num_tokens = 0;   // 0 with hidden_size 0: a row of the 1-D size sweep
  int64_t hidden_size = 0;  // > 0 with num_tokens > 0: a cell of the 2-D sweep
  ArStrategy strategy = ArStrategy::kNccl;
  ArFusion fusion = ArFusion::kNone;
  ArMode mode = ArMode::kEager;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;

  std::string where;  // "file:line", for messages

  bool is_grid() const { return num_tokens > 0; }
};

// Parses one sweep CSV. `what` names the file in messages. InvalidInput, naming file and line,
// for a wrong header or column count, an unknown strategy/fusion/mode/dtype, a non-numeric or
// out-of-range value, a size that disagrees with num_tokens x hidden_size x dtype, and a cell
// measured twice. Blank lines and lines starting with '#' are skipped.
StatusOr<std::vector<SweepRow>> ParseSweepCsv(std::string_view text, const std::string& what);

// InvalidInput naming both places when one cell (world size, dtype, size, tokens, hidden size,
// strategy, fusion, mode) is measured twice.
Status CheckSweepDuplicates(const std::vector<SweepRow>& rows);

// Reads and concatenates several sweep CSVs; a cell measured in two files is an error too.
StatusOr<std::vector<SweepRow>> ReadSweepCsvFiles(const std::vector<std::string>& paths);

}  // namespace sightline
