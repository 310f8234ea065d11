#include "analyses/iteration_log/iteration_log_batch.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <variant>

namespace sightline {
namespace {

constexpr std::array<std::string_view, 3> kGraphBatchKeys = {
    "graph_batch_size", "padded_batch_size", "cuda_graph_batch_size"};
// Larger "batches" are not batch sizes (and would overflow the products made of them).
constexpr int64_t kMaxBatch = int64_t{1} << 40;

}  // namespace

LoggedBatch LoggedBatchOf(const IterationLogEntry& e) {
  LoggedBatch out;
  const std::optional<int64_t>& ctx = e.field(IterationLogField::kContextRequests);
  const std::optional<int64_t>& gen = e.field(IterationLogField::kGenerationRequests);
  const std::optional<int64_t>& active = e.field(IterationLogField::kActiveRequests);
  out.context = ctx && *ctx > 0;
  const std::optional<int64_t>& real = gen ? gen : active;
  if (real && (*real < 0 || *real > kMaxBatch)) {
    out.bad_decode = true;
  } else if (real && !out.context) {
    out.decode = *real;
  }
  for (const auto& [key, value] : e.user) {
    if (std::find(kGraphBatchKeys.begin(), kGraphBatchKeys.end(), key) == kGraphBatchKeys.end()) {
      continue;
    }
    if (const int64_t* v = std::get_if<int64_t>(&value);
        v != nullptr && *v > 0 && *v <= kMaxBatch) {
      out.graph = *v;
      break;
    }
    if (const double* v = std::get_if<double>(&value);
        v != nullptr && *v >= 1 && *v <= static_cast<double>(kMaxBatch) && std::floor(*v) == *v) {
      out.graph = static_cast<int64_t>(*v);
      break;
    }
    out.bad_graph = true;
  }
  if (out.graph) out.bad_graph = false;  // an earlier key's garbage, a later key's size
  return out;
}

}  // namespace sightline
