#include "pipeline/snapshot_weights.h"

#include <fmt/format.h>

#include "analyses/memory/memory.h"
#include "base/file_io.h"
#include "importers/inputs.h"
#include "importers/model_config/model_config.h"
#include "importers/torch_snapshot/torch_snapshot_importer.h"
#include "pipeline/trace_sets.h"

namespace sightline {

StatusOr<InputFile> AddSnapshotWeights(const std::string& path, AnalyzeOptions& options) {
  ASSIGN_OR_RETURN(RecognisedInput in, RecogniseInput(path));
  if (in.reader->name != std::string_view(kTorchSnapshotReader.name)) {
    return InvalidArgumentError(fmt::format(
        "{}: --weights-snapshot takes a PyTorch memory snapshot "
        "(torch.cuda.memory._dump_snapshot), but this file is {} ({}); give a snapshot taken "
        "after the model was loaded",
        path, in.reader->name, in.reader->description));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<AnalysisContext> context, ImportContext(path, AnalyzeOptions{}));
  ASSIGN_OR_RETURN(const MemoryResult* memory, CachedMemory(*context));
  const PurposeRow* best = nullptr;
  int32_t device = -1;
  for (const DeviceMemory& d : memory->devices) {
    if (d.purpose_at_end.rows.size() <= kPurposeWeights) continue;
    const PurposeRow& w = d.purpose_at_end.rows[kPurposeWeights];
    if (w.bytes > 0 && (best == nullptr || w.bytes > best->bytes)) {
      best = &w;
      device = d.device;
    }
  }
  if (best == nullptr) {
    return InvalidArgumentError(fmt::format(
        "{}: no allocation alive at the snapshot's dump is a weight (docs/analyses/memory.md, "
        "\"Memory by purpose\"): take the snapshot after the model is loaded, with its stacks "
        "(torch.cuda.memory._record_memory_history()), or give --model-config",
        path));
  }
  auto model = options.floor.model ? std::make_shared<ModelConfig>(*options.floor.model)
                                   : std::make_shared<ModelConfig>();
  model->snapshot_weight_bytes = best->bytes;
  model->snapshot_weights = fmt::format("{}: {} allocations on device {} at the dump",
                                        FileNameOf(path), best->allocations, device);
  options.floor.model = std::move(model);
  return InputFile{
      path, in.reader->name, "trace",
      fmt::format("the weights a step reads, for the floor section ({} B)", best->bytes)};
}

}  // namespace sightline
