// The batch sizes an iteration log line states (docs/formats/iteration-log.md): the real batch of a
// decode step and the batch of the CUDA graph it replayed. Read by the rule graph_padding and by
// the cuda_graphs section, which picks each whole-traced graph's eager runs by batch size.
#pragma once

#include <cstdint>
#include <optional>

#include "importers/iteration_log/iteration_log.h"

namespace sightline {

struct LoggedBatch {
  // The sequences the step decoded: `generation_requests`, else `active_requests`. Absent when the
  // line states neither, when it states a negative count (bad_decode), or when the step also ran
  // context (prefill) work (`context_requests` > 0: its kernels' shapes follow the prompt tokens,
  // not the batch).
  std::optional<int64_t> decode;
  bool context = false;     // context_requests > 0
  bool bad_decode = false;  // generation_requests (or active_requests) < 0
  // The captured batch of the graph the step replayed: the user field `graph_batch_size` (or
  // `padded_batch_size`, `cuda_graph_batch_size`), the first one holding a positive integer (an
  // integral number counts: 8.0). Absent when none does; bad_graph when one of those keys is
  // present with anything else (a string, 0, a negative or fractional number, null).
  std::optional<int64_t> graph;
  bool bad_graph = false;
};

LoggedBatch LoggedBatchOf(const IterationLogEntry& e);

}  // namespace sightline
