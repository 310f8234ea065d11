// See ar_select.h. The table is the committed header that `sightline allreduce tune` generated;
// its fusion enumerators are in the order of sightline_ar_fusion, and its strategies in the order
// of sightline_ar_strategy (kNccl 0 .. kLamport 3).
#include "shared/ar_select.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "shared/allreduce_lut.h"
#include "shared/ar_names.h"

namespace sightline::allreduce {
namespace {

static_assert(SIGHTLINE_AR_STRATEGY_LAMPORT == 3 && SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4 == 4,
              "the codes index allreduce_names' tables");

constexpr int kRowElements = 4096;  // the row an unfused call without a hidden size is taken as

const lut_detail::Table* FindTable(int world, int fusion) {
  for (const lut_detail::Table& t : lut_detail::kTables) {
    if (t.world_size == world && static_cast<int>(t.fusion) == fusion) return &t;
  }
  return nullptr;
}

// The table's world size for `world`: itself, else the next larger measured, else the largest.
int TableWorld(int world, int fusion) {
  int above = 0, largest = 0;
  for (const lut_detail::Table& t : lut_detail::kTables) {
    if (static_cast<int>(t.fusion) != fusion) continue;
    if (t.world_size == world) return world;
    if (t.world_size > world && (above == 0 || t.world_size < above)) above = t.world_size;
    largest = std::max(largest, t.world_size);
  }
  return above != 0 ? above : largest;
}

int Clamp(int64_t v, const int* grid, int n) {
  return static_cast<int>(std::clamp<int64_t>(v, grid[0], grid[n - 1]));
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

ArTableKey TableKeyFor(const ArCallShape& call) {
  ArTableKey key;
  int fusion = static_cast<int>(call.fusion);
  int world = TableWorld(call.world, fusion);
  // The quantizing fusions run residual_rmsnorm's row kernels plus a tail. The world size decides
  // more than the tail (one-shot's cost grows with it), so the world is residual_rmsnorm's choice,
  // and the fusion's own table is used only where it was measured at that world.
  const int row_world = TableWorld(call.world, SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM);
  if (fusion > SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM && row_world != 0) {
    world = row_world;
    if (FindTable(world, fusion) == nullptr) fusion = SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM;
  }
  key.fusion = fusion;
  key.world = world;
  const lut_detail::Table* t = key.world != 0 ? FindTable(key.world, fusion) : nullptr;
  const int64_t dtype_bytes = call.dtype == SIGHTLINE_AR_FP32 ? 4 : 2;
  const int64_t elems = std::max<int64_t>(1, call.count * dtype_bytes / 2);  // bf16-sized
  int64_t hidden = call.hidden;
  if (call.fusion == SIGHTLINE_AR_FUSION_NONE &&
      (hidden <= 0 || call.count % hidden != 0 || hidden > call.count)) {
    hidden = std::min<int64_t>(elems, kRowElements);
  } else {
    hidden = std::max<int64_t>(1, hidden * dtype_bytes / 2);
  }
  const int64_t tokens = std::max<int64_t>(1, elems / std::max<int64_t>(1, hidden));
  if (t == nullptr) {
    key.hidden = static_cast<int>(std::min<int64_t>(hidden, 1 << 30));
    key.tokens = static_cast<int>(std::min<int64_t>(tokens, 1 << 30));
    return key;
  }
  key.found = true;
  key.hidden = Clamp(hidden, t->hidden, t->num_hidden);
  key.tokens = Clamp(tokens, t->tokens, t->num_tokens);
  return key;
}

sightline_ar_strategy TableStrategy(const ArCallShape& call) {
  const ArTableKey key = TableKeyFor(call);
  if (!key.found) return SIGHTLINE_AR_STRATEGY_NCCL;
  const lut_detail::Table* t = FindTable(key.world, key.fusion);
  const int h = lut_detail::NearestIndex(t->hidden, t->num_hidden, key.hidden);
  const int k = lut_detail::NearestIndex(t->tokens, t->num_tokens, key.tokens);
  if (h < 0 || k < 0) return SIGHTLINE_AR_STRATEGY_NCCL;
  return static_cast<sightline_ar_strategy>(static_cast<int>(t->cells[h * t->num_tokens + k]));
}

bool ParseStrategyName(std::string_view name, sightline_ar_strategy* out) {
  const std::string s = Lower(name);
  if (s == "auto") {
    *out = SIGHTLINE_AR_STRATEGY_AUTO;
    return true;
  }
  const int code = allreduce_names::IndexOf(allreduce_names::kStrategies, s);
  if (code < 0) return false;
  *out = static_cast<sightline_ar_strategy>(code);
  return true;
}

bool ParseStrategyOverride(const char* value, sightline_ar_strategy* out, std::string* error) {
  *out = SIGHTLINE_AR_STRATEGY_AUTO;
  if (value == nullptr || *value == '\0') return true;
  if (ParseStrategyName(value, out)) return true;
  *error = std::string("SIGHTLINE_ALLREDUCE_STRATEGY=") + value + ": expected one of auto, " +
           allreduce_names::Listed(allreduce_names::kStrategies, ", ");
  return false;
}

const char* StrategyLabel(sightline_ar_strategy s) {
  // The names are literals, so their data are NUL-terminated C strings.
  if (s == SIGHTLINE_AR_STRATEGY_AUTO) return "auto";
  const std::string_view n = allreduce_names::NameAt(allreduce_names::kStrategies, s);
  return n == "?" ? "unknown" : n.data();
}

const char* FusionLabel(sightline_ar_fusion f) {
  const std::string_view n = allreduce_names::NameAt(allreduce_names::kFusions, f);
  return n == "?" ? "unknown" : n.data();
}

std::string PlainCallSizeError(uint64_t count, uint64_t hidden) {
  if (count == 0) return "count is 0";
  if (count > kMaxCallElements)
    return "count " + std::to_string(count) + " is beyond 2^48 elements: not a size a GPU holds";
  if (hidden > kMaxHiddenSize)
    return "hidden_size " + std::to_string(hidden) + " is beyond 2^31 elements";
  return "";
}

std::string FusedCallSizeError(uint64_t tokens, uint64_t hidden) {
  if (tokens == 0 || hidden == 0) return "tokens and hidden_size must not be 0";
  if (hidden > kMaxHiddenSize)
    return "hidden_size " + std::to_string(hidden) + " is beyond 2^31 elements";
  if (tokens > kMaxCallElements / hidden)
    return "tokens x hidden_size (" + std::to_string(tokens) + " x " + std::to_string(hidden) +
           ") is beyond 2^48 elements: not a size a GPU holds";
  return "";
}

bool ChooseStrategy(const ArCallShape& call, sightline_ar_strategy requested,
                    sightline_ar_strategy env_override, const ArFits& fits, ArChoice* choice,
                    std::string* error) {
  if (requested != SIGHTLINE_AR_STRATEGY_AUTO) {
    const std::string why = fits(requested);
    if (!why.empty()) {
      *error = std::string(StrategyLabel(requested)) + " cannot take this call: " + why;
      return false;
    }
    *choice = ArChoice{requested, "argument", ""};
    return true;
  }
  ArChoice c;
  if (env_override != SIGHTLINE_AR_STRATEGY_AUTO) {
    c.strategy = env_override;
    c.source = "environment";
  } else {
    c.strategy = TableStrategy(call);
  }
  // Fallback order: from the first choice towards NCCL, which takes any size.
  static constexpr sightline_ar_strategy kOrder[] = {
      SIGHTLINE_AR_STRATEGY_LAMPORT, SIGHTLINE_AR_STRATEGY_ONESHOT, SIGHTLINE_AR_STRATEGY_TWOSHOT,
      SIGHTLINE_AR_STRATEGY_NCCL};
  bool started = false;
  std::string first_why;
  for (sightline_ar_strategy s : kOrder) {
    if (s == c.strategy) started = true;
    if (!started) continue;
    const std::string why = fits(s);
    if (why.empty()) {
      c.fallback = s == c.strategy ? "" : std::string(StrategyLabel(c.strategy)) + ": " + first_why;
      c.strategy = s;
      *choice = c;
      return true;
    }
    if (first_why.empty()) first_why = why;
  }
  *error = "no strategy can take this call: " + first_why;
  return false;
}

}  // namespace sightline::allreduce
