// Host side of libsightline_allreduce (cuda/allreduce/library.cc): which strategy a call runs.
// The tuned table (allreduce_lut.h, written by `sightline allreduce tune`) proposes, the
// SIGHTLINE_ALLREDUCE_STRATEGY override or an explicit argument replaces the proposal, and the
// kernels' limits decide what can run. Standard C++ only: the GPU side compiles it in, and the
// CPU-side tests (tests/allreduce_select_test.cc) check it without a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "sightline/allreduce.h"

namespace sightline::allreduce {

// One call as the table sees it. hidden 0: unknown (unfused calls only).
struct ArCallShape {
  int world = 2;
  sightline_ar_fusion fusion = SIGHTLINE_AR_FUSION_NONE;
  sightline_ar_dtype dtype = SIGHTLINE_AR_BF16;
  int64_t count = 0;   // elements
  int64_t hidden = 0;  // elements per row
};

// The table cell a call is looked up in. The table was measured in bf16, so the key counts
// bf16-sized elements: tokens = count x dtype bytes / 2 / hidden. Unfused calls without a hidden
// size (or with one that does not divide the count) are rows of 4096 elements (shorter messages:
// one row). Both are clamped into the grid, so that the nearest cell (in log2) decides.
struct ArTableKey {
  int world = 0;   // the table's world size: the call's, else the next larger, else the largest
  int fusion = 0;  // the table's fusion (a quantizing fusion's own where measured at `world`,
                   // else residual_rmsnorm's)
  int hidden = 0;
  int tokens = 0;
  bool found = false;  // false: no table for this world size and fusion (the choice is NCCL)
};
ArTableKey TableKeyFor(const ArCallShape& call);

// Sizes a call may have: counts of elements up to 2^48 (beyond any GPU's memory), hidden sizes up
// to 2^31. "" when the call's sizes are in range, else what is wrong, for the library's
// SIGHTLINE_AR_ERROR_INVALID_ARGUMENT (sizes are size_t there: a huge one must not wrap negative
// on its way to the kernels). Plain calls: count >= 1, hidden 0 (unknown) or more; fused calls:
// tokens and hidden >= 1, tokens x hidden within the count limit.
inline constexpr uint64_t kMaxCallElements = uint64_t{1} << 48;
inline constexpr uint64_t kMaxHiddenSize = uint64_t{1} << 31;
std::string PlainCallSizeError(uint64_t count, uint64_t hidden);
std::string FusedCallSizeError(uint64_t tokens, uint64_t hidden);

// The table's strategy for the call (NCCL when there is no table).
sightline_ar_strategy TableStrategy(const ArCallShape& call);

// SIGHTLINE_ALLREDUCE_STRATEGY's value: null, "" and "auto" mean no override (AUTO); nccl,
// oneshot, twoshot, lamport in any case (TensorRT-LLM spells them in capitals). false and *error
// for anything else.
bool ParseStrategyOverride(const char* value, sightline_ar_strategy* out, std::string* error);
// The same names, for sightline_ar_parse_strategy ("auto" gives AUTO).
bool ParseStrategyName(std::string_view name, sightline_ar_strategy* out);
const char* StrategyLabel(sightline_ar_strategy s);
const char* FusionLabel(sightline_ar_fusion f);

// Why a strategy cannot take the call ("" when it can); the library asks the kernels.
using ArFits = std::function<std::string(sightline_ar_strategy)>;

struct ArChoice {
  sightline_ar_strategy strategy = SIGHTLINE_AR_STRATEGY_NCCL;
  const char* source = "table";  // "argument", "environment" or "table"
  std::string fallback;          // why the first choice could not run ("" when it ran)
};

// requested != AUTO: that strategy, or false with *error saying why it cannot run. Else the
// override (when not AUTO) or the table, falling back lamport -> oneshot -> twoshot -> nccl from
// the first choice to the first that fits; false only when not even NCCL fits.
bool ChooseStrategy(const ArCallShape& call, sightline_ar_strategy requested,
                    sightline_ar_strategy env_override, const ArFits& fits, ArChoice* choice,
                    std::string* error);

}  // namespace sightline::allreduce
