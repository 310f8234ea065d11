#include "analyses/iteration_log/iteration_log_kind.h"

#include <memory>

#include "analyses/iteration_log/iteration_log_summary.h"

namespace sightline {
namespace {

Status Join(const RecognisedInput& input, RunInputs& inputs) {
  ASSIGN_OR_RETURN(InputDocument d, ReadRecognisedInput(input));
  inputs.iteration_log =
      std::make_shared<const IterationLog>(std::move(std::get<IterationLog>(d.value)));
  return Status::Ok();
}

// A log without the trace of its run: what the log itself states, and what the trace would add.
void WithoutMembers(const RunInputs& inputs, Report& report) {
  if (inputs.iteration_log) AddIterationLogSummary(*inputs.iteration_log, report);
}

std::string Use(const InputFile& /*file*/, const FilesView& run,
                std::map<std::string, std::string>& /*companions*/) {
  return run.first_member.empty() ? "its own figures (no trace to join it to)"
                                  : "joined to each trace's iterations";
}

}  // namespace

const DocumentKind& IterationLogKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"iteration log", "iteration logs", {InputKind::kIterationLog}};
    k.role = DocumentKind::Role::kJoins;
    k.option = "--iteration-log";
    k.one_only = "one run joins one log to its traces";
    k.leads = true;
    k.join = &Join;
    k.without_members = &WithoutMembers;
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
