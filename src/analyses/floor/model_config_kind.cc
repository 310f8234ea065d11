#include "analyses/floor/model_config_kind.h"

#include <memory>

namespace sightline {
namespace {

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
    // No check_absent: without a config, the floor's options ask for the floor from the trace's
    // GEMM shapes (floor_options.h), and the section says why there is none when it has none.
    k.join = &Join;
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
