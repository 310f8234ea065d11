#include "analyses/trace_kind.h"

#include <fmt/format.h>

#include "base/file_io.h"
#include "importers/recorder/run_processes.h"

namespace sightline {
namespace {

std::string Use(const InputFile& file, const FilesView& run,
                std::map<std::string, std::string>& companions) {
  // A recording of a run: the processes document beside it is read with it.
  const std::string tree = ProcessTreeOf(file.path, *run.skipped);
  if (!tree.empty()) {
    companions[tree] = "the run's process tree, read with its recordings";
    return fmt::format("a process of the run ({})", FileNameOf(tree));
  }
  return run.members > 1 ? "a rank of the job" : "the trace";
}

}  // namespace

const DocumentKind& TraceKind() {
  static const DocumentKind kKind = [] {
    DocumentKind k{"trace", "traces", {InputKind::kTrace}};
    k.role = DocumentKind::Role::kMember;
    k.leads = true;
    k.use = &Use;
    return k;
  }();
  return kKind;
}

}  // namespace sightline
