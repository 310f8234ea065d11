// The registry entry "ranks" (ranks.h, CreateRanksAnalysis): a multi-trace analysis over the
// ranks of one job.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "analyses/common/reducible_analysis.h"
#include "analyses/ranks/ranks.h"
#include "facts/results_cache.h"

namespace sightline {
namespace {

// Ranks as a multi-trace analysis: a compact profile per member while its trace is loaded, then
// the side-by-side section, and the ranks result for the straggler rule.
class RanksAnalysis : public ReducibleAnalysis {
 public:
  explicit RanksAnalysis(const AnalyzeOptions& options) : options_(options.ranks) {}

  StatusOr<std::string> Reduce(const std::shared_ptr<AnalysisContext>& context,
                               const TraceSetMember& member) override {
    ASSIGN_OR_RETURN(RankProfile profile, ComputeRankProfile(*context, member.label, member.input));
    return EncodeRankProfile(profile);
  }
  Status AddReduced(const std::string& blob, const TraceSetMember& member) override {
    ASSIGN_OR_RETURN(RankProfile profile, DecodeRankProfile(blob));
    profile.input = member.input;  // the index in process 0's report
    profiles_.push_back(std::move(profile));
    paths_.push_back(member.path);
    return Status::Ok();
  }

  Status Finish(const TraceSet& set, Report& report, ResultsCache& results) override {
    // Several inputs are the ranks of one job; one input gets the per-rank view when it says it is
    // one rank of several.
    if (profiles_.size() < 2 && !(profiles_.size() == 1 && profiles_[0].world_size > 1)) {
      return Status::Ok();
    }
    if (ProcessesOfOneProgram()) return Status::Ok();  // the run section shows them
    ASSIGN_OR_RETURN(RanksResult ranks, ComputeRanks(profiles_, paths_, options_));
    AddRanksSection(ranks, report);
    results.Put(std::move(ranks));  // for the straggler rule; it points into profiles_
    return Status::Ok();
  }

 private:
  // Recordings of one run (`sightline record`'s processes of one program: a server's CUDA
  // workers) that carry no rank number and run no communication kernel: no collective to match,
  // no rank to name; the run analysis (analyses/processes/run_view.h) puts them side by side.
  bool ProcessesOfOneProgram() const {
    for (const RankProfile& p : profiles_) {
      if (p.run_key.empty() || p.run_key != profiles_[0].run_key || p.trace_rank >= 0 ||
          p.comm_kernels > 0) {
        return false;
      }
    }
    return true;
  }

  RanksOptions options_;
  std::vector<RankProfile> profiles_;
  std::vector<std::string> paths_;
};

}  // namespace

std::unique_ptr<MultiTraceAnalysis> CreateRanksAnalysis(const AnalyzeOptions& options,
                                                        const RunInputs& /*inputs*/) {
  return std::make_unique<RanksAnalysis>(options);
}

}  // namespace sightline
