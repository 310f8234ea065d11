#include "analyses/floor/weights_snapshot_kind.h"

#include <fmt/format.h>

#include <memory>
#include <string_view>

#include "analyses/common/analysis_context.h"
#include "analyses/memory/memory.h"
#include "base/file_io.h"
#include "importers/model_config/model_config.h"
#include "importers/torch_snapshot/torch_snapshot_importer.h"

namespace sightline {
namespace {

// Gives inputs.model the weights of the device holding the most at the dump: a copy of
// the config joined before, or a model of those weights alone (the model config's join keeps them
// when it comes after).
Status Join(const RecognisedInput& input, RunInputs& inputs) {
  if (input.reader->name != std::string_view(kTorchSnapshotReader.name)) {
    return InvalidArgumentError(fmt::format(
        "{}: --weights-snapshot takes a PyTorch memory snapshot "
        "(torch.cuda.memory._dump_snapshot), but this file is {} ({}); give a snapshot taken "
        "after the model was loaded",
        input.path, input.reader->name, input.reader->description));
  }
  ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(input));
  AnalysisContext context(std::make_unique<const Trace>(std::move(std::get<Trace>(d.value))));
  ASSIGN_OR_RETURN(const MemoryResult* memory, CachedMemory(context));
  const PurposeRow* best = nullptr;
  int32_t device = -1;
  for (const DeviceMemory& m : memory->devices) {
    if (m.purpose_at_end.rows.size() <= kPurposeWeights) continue;
    const PurposeRow& w = m.purpose_at_end.rows[kPurposeWeights];
    if (w.bytes > 0 && (best == nullptr || w.bytes > best->bytes)) {
      best = &w;
      device = m.device;
    }
  }
  if (best == nullptr) {
    return InvalidArgumentError(fmt::format(
        "{}: no allocation alive at the snapshot's dump is a weight (docs/analyses/memory.md, "
        "\"Memory by purpose\"): take the snapshot after the model is loaded, with its stacks "
        "(torch.cuda.memory._record_memory_history()), or give --model-config",
        input.path));
  }
  auto model =
      inputs.model ? std::make_shared<ModelConfig>(*inputs.model) : std::make_shared<ModelConfig>();
  model->snapshot_weight_bytes = best->bytes;
  model->snapshot_weights = fmt::format("{}: {} allocations on device {} at the dump",
                                        FileNameOf(input.path), best->allocations, device);
  inputs.model = std::move(model);
  return Status::Ok();
}

std::string Use(const InputFile& /*file*/, const FilesView& /*run*/,
                std::map<std::string, std::string>& /*companions*/) {
  return "the weights a step reads, for the floor section";
}

}  // namespace

const DocumentKind& WeightsSnapshotKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"weights snapshot", "weights snapshots", {InputKind::kTrace}};
    k.role = DocumentKind::Role::kJoins;
    k.option = "--weights-snapshot";
    k.named_only = true;
    k.option_note = "a PyTorch memory snapshot taken after the model was loaded";
    k.needs_members =
        "--weights-snapshot gives the floor the weights each step reads: it needs a trace of "
        "the steps";
    k.join = &Join;
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
