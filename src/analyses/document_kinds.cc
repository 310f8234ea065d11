// The registry of document kinds (common/document_kind.h): one line per kind, each defined in its
// own folder. The order is the pipeline's: the traces, then the documents joined to them (each
// checked, then read, in this order), then those with a report of their own.
#include <fmt/format.h>

#include "analyses/allreduce_sweep/sweep_kind.h"
#include "analyses/common/document_kind.h"
#include "analyses/cuda_graphs/eager_reference_kind.h"
#include "analyses/floor/model_config_kind.h"
#include "analyses/floor/weights_snapshot_kind.h"
#include "analyses/iteration_log/iteration_log_kind.h"
#include "analyses/ncu/ncu_kind.h"
#include "analyses/serving/serving_kind.h"
#include "analyses/trace_kind.h"
#include "analyses/trt_engine/trt_engine_kind.h"

namespace sightline {

const std::vector<const DocumentKind*>& DocumentKinds() {
  static const std::vector<const DocumentKind*> kKinds = {
      &TraceKind(),       &ServingResultsKind(),  &IterationLogKind(),
      &ModelConfigKind(), &WeightsSnapshotKind(), &EagerReferenceKind(),
      &TrtEngineKind(),   &NcuExportKind(),       &AllreduceSweepKind(),
  };
  return kKinds;
}

const DocumentKind* DocumentKindOf(InputKind kind) {
  for (const DocumentKind* k : DocumentKinds()) {
    if (k->named_only) continue;
    for (InputKind d : k->documents) {
      if (d == kind) return k;
    }
  }
  return nullptr;
}

const DocumentKind* DocumentKindOfOption(std::string_view option) {
  for (const DocumentKind* k : DocumentKinds()) {
    if (option == k->option) return k;
  }
  return nullptr;
}

std::string ListOfKinds(const std::vector<std::string>& items, std::string_view last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? fmt::format(" {} ", last) : std::string(", ");
    out += items[i];
  }
  return out;
}

}  // namespace sightline
