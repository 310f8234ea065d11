// The registry entry "run_processes" (run_view.h, CreateRunAnalysis): a multi-trace analysis over
// the recordings of one run. Reducible: each recording becomes a RunMember blob where its trace is
// loaded.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyses/common/reducible_analysis.h"
#include "analyses/processes/run_view.h"
#include "facts/results_cache.h"

namespace sightline {
namespace {

class RunOfProcessesAnalysis : public ReducibleAnalysis {
 public:
  explicit RunOfProcessesAnalysis(const AnalyzeOptions&) {}

  StatusOr<std::string> Reduce(const std::shared_ptr<AnalysisContext>& context,
                               const TraceSetMember& member) override {
    ASSIGN_OR_RETURN(RunMember m, ComputeRunMember(*context, member.label, member.input));
    return EncodeRunMember(m);
  }
  Status AddReduced(const std::string& blob, const TraceSetMember& member) override {
    ASSIGN_OR_RETURN(RunMember m, DecodeRunMember(blob));
    if (m.run_key.empty()) return Status::Ok();  // no run's process tree beside it
    m.input = member.input;                      // the index in process 0's report
    m.label = member.label;
    members_.push_back(std::move(m));
    return Status::Ok();
  }

  Status Finish(const TraceSet&, Report& report, ResultsCache& results) override {
    if (members_.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(RunsResult runs, ComputeRuns(std::move(members_)));
    AddRunSections(runs, report);
    results.Put(std::move(runs));  // for the rule other_process_busy
    return Status::Ok();
  }

 private:
  std::vector<RunMember> members_;
};

}  // namespace

std::unique_ptr<MultiTraceAnalysis> CreateRunAnalysis(const AnalyzeOptions& options,
                                                      const RunInputs& /*inputs*/) {
  return std::make_unique<RunOfProcessesAnalysis>(options);
}

}  // namespace sightline
