// The findings engine: rules that read analysis results and turn them into ranked advice
// (DESIGN.md §Findings). Each rule is one small file rule_<id>.cc; the analyses the rules need are
// computed once in the trace's AnalysisContext. Input: one AnalysisContext. Output: findings,
// largest estimated saving first. Rules, thresholds and estimates: docs/analyses/findings.md.
#pragma once

#include <string>
#include <vector>

#include "analyses/analysis.h"
#include "analyses/analysis_context.h"
#include "analyses/intervals.h"
#include "analyses/iterations.h"
#include "analyses/ranks.h"
#include "base/status.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

using FindingRuleFn = Status (*)(AnalysisContext& context, std::vector<Finding>& out);

struct FindingRule {
  const char* id;       // finding id, e.g. "launch_bound"
  const char* summary;  // one line
  FindingRuleFn run;
};

// All rules, in priority order (ties in estimated savings keep this order).
const std::vector<FindingRule>& FindingRules();

// Runs every rule on the context; findings sorted by estimated_savings_ns, largest first
// (Finding::input unset). The rules share the context's iterations, busy unions and windows.
StatusOr<std::vector<Finding>> ComputeFindings(AnalysisContext& context);

// Registry entry "findings": appends the context's findings (when options().findings) to the
// report's findings, which stay ranked over every input.
Status RunFindings(AnalysisContext& context, int input, Report& report);

// The rules (one file each).
Status RuleLaunchBound(AnalysisContext& context, std::vector<Finding>& out);
Status RuleHostSync(AnalysisContext& context, std::vector<Finding>& out);
Status RuleOutlierIterations(AnalysisContext& context, std::vector<Finding>& out);
Status RuleSmallGrid(AnalysisContext& context, std::vector<Finding>& out);
Status RuleKernelChain(AnalysisContext& context, std::vector<Finding>& out);
Status RuleSiblingGemms(AnalysisContext& context, std::vector<Finding>& out);
Status RuleExposedComm(AnalysisContext& context, std::vector<Finding>& out);
Status RuleLowUtilization(AnalysisContext& context, std::vector<Finding>& out);
Status RuleGilContention(AnalysisContext& context, std::vector<Finding>& out);
Status RuleGcPauses(AnalysisContext& context, std::vector<Finding>& out);
Status RuleBlockingOsCall(AnalysisContext& context, std::vector<Finding>& out);
Status RuleHostBoundPipeline(AnalysisContext& context, std::vector<Finding>& out);
Status RuleSmUnderfilled(AnalysisContext& context, std::vector<Finding>& out);
Status RuleAllocInLoop(AnalysisContext& context, std::vector<Finding>& out);
Status RuleGraphRecapture(AnalysisContext& context, std::vector<Finding>& out);
Status RuleGraphLaunchGaps(AnalysisContext& context, std::vector<Finding>& out);
Status RuleGraphVariants(AnalysisContext& context, std::vector<Finding>& out);
Status RuleGraphPadding(AnalysisContext& context, std::vector<Finding>& out);
Status RuleMemoryFragmentation(AnalysisContext& context, std::vector<Finding>& out);
Status RuleMemoryNearCapacity(AnalysisContext& context, std::vector<Finding>& out);
Status RuleMemoryBoundPhase(AnalysisContext& context, std::vector<Finding>& out);
Status RuleBusyButEmpty(AnalysisContext& context, std::vector<Finding>& out);
Status RuleIdleSmsDuringComm(AnalysisContext& context, std::vector<Finding>& out);
// Multi-rank rule: runs once over all inputs (AnalyzeFiles), on the ranks analysis.
Status RuleStraggler(const RanksResult& ranks, std::vector<Finding>& out);

// An idle gap between two pieces of a window's GPU work longer than this is a host stall (GC,
// scheduling, I/O, response handling), not launch overhead: launch_bound counts the shorter ones,
// host_bound_pipeline the longer ones and the idle before a window's first and after its last work.
inline constexpr DurationNs kMaxLaunchGapNs = 1'000'000;

// Helpers the rules share.
std::string Percent(double part, double whole);  // "42.1%"

// The loop windows after the first iteration (warm-up: compilation, allocation, graph capture),
// for rules about work that should not recur in the loop (alloc_in_loop, graph_recapture).
class LoopAfterWarmup {
 public:
  explicit LoopAfterWarmup(AnalysisContext& context);
  // The window holding time t of process pid (AnalysisContext::FindWindow); -1 when none or
  // when it is the first iteration.
  int64_t Find(int32_t pid, TimeNs t) const;
  // Iterations after the first.
  int64_t iterations() const { return static_cast<int64_t>(context_.Windows().size()) - 1; }

 private:
  AnalysisContext& context_;
  int64_t first_iteration_ = INT64_MAX;
};
// Ranks findings: largest estimated saving first; ties keep their order.
void SortFindings(std::vector<Finding>& findings);

}  // namespace sightline
