#include "analyses/cuda_graphs/eager_reference_kind.h"

#include <memory>

namespace sightline {
namespace {

Status Join(const RecognisedInput& input, RunInputs& inputs) {
  ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(input));
  inputs.eager_reference = std::make_shared<const Trace>(std::move(std::get<Trace>(d.value)));
  inputs.eager_reference_path = input.path;
  return Status::Ok();
}

std::string Use(const InputFile& /*file*/, const FilesView& /*run*/,
                std::map<std::string, std::string>& /*companions*/) {
  return "eager reference: its eager runs estimate the whole-graph runs";
}

}  // namespace

const DocumentKind& EagerReferenceKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"eager reference", "eager references", {InputKind::kTrace}};
    k.role = DocumentKind::Role::kJoins;
    k.option = "--eager-reference";
    k.named_only = true;
    k.option_note = "the same program run eagerly, recorded separately";
    k.needs_members =
        "--eager-reference needs a trace to estimate: its eager runs give the per-range time of "
        "the CUDA graphs another trace ran as a whole";
    k.join = &Join;
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
