#include "analyses/floor/model_config_kind.h"

#include <memory>

namespace sightline {
namespace {

Status CheckAbsent(const AnalyzeOptions& options) {
  const FloorOptions& floor = options.floor;
  if (!floor.weights_snapshot && (floor.batch > 0 || floor.context >= 0 ||
                                  floor.peak_bandwidth_gbps > 0 || floor.peak_tflops > 0)) {
    return InvalidArgumentError(
        "--batch, --context, --peak-bandwidth and --peak-tflops are for the floor, which needs "
        "the model's config: add --model-config config.json (or a memory snapshot's weights: "
        "--weights-snapshot)");
  }
  return Status::Ok();
}

Status Join(const RecognisedInput& input, RunInputs& inputs) {
  ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(input));
  auto model = std::make_shared<ModelConfig>(std::move(std::get<ModelConfig>(d.value)));
  // A weights snapshot joined first (floor/weights_snapshot_kind.h) keeps its weights beside the
  // config's.
  if (inputs.model != nullptr) {
    model->snapshot_weight_bytes = inputs.model->snapshot_weight_bytes;
    model->snapshot_weights = inputs.model->snapshot_weights;
  }
  inputs.model = std::move(model);
  return Status::Ok();
}

std::string Use(const InputFile& /*file*/, const FilesView& /*run*/,
                std::map<std::string, std::string>& /*companions*/) {
  return "the model's shapes, for the floor section";
}

}  // namespace

const DocumentKind& ModelConfigKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"model config", "model configs", {InputKind::kModelConfig}};
    k.role = DocumentKind::Role::kJoins;
    k.option = "--model-config";
    k.one_only = "give one";
    k.check_absent = &CheckAbsent;
    k.join = &Join;
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
