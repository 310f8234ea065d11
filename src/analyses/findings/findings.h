// The findings engine: rules that read analysis results and turn them into ranked advice
// (DESIGN.md §Findings). Each rule is one small file rule_<id>.cc and one line in FindingRules(),
// keyed by the data it reads: a trace's AnalysisContext (run per trace by the registry entry
// "findings"), or the whole result of an analysis over other inputs -- the ranks of a job, a
// serving benchmark's requests, a TensorRT engine -- which the pipeline runs on the results those
// analyses leave in its ResultsCache. Output: findings, largest estimated saving first. Rules,
// thresholds and estimates: docs/analyses/findings.md; `sightline findings` lists the rules.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/common/analysis_context.h"
#include "base/status.h"
#include "facts/intervals.h"
#include "facts/iterations.h"
#include "facts/results_cache.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// The whole results rules read besides a trace's context.
struct RanksResult;       // analyses/ranks/ranks.h: the ranks of one job
struct ServingMetrics;    // analyses/serving/serving_metrics.h: a serving benchmark's requests
struct QueueingTail;      // analyses/serving/queueing.h: its TTFT tail's time in the queue
struct ServingTraceJoin;  // analyses/serving/serving_trace_join.h: its token gaps on a trace
struct TrtEngineResult;   // trt/trt_analysis.h: a TensorRT engine and its analysis
struct RunsResult;        // analyses/processes/run_view.h: the processes of a recorded run

// A rule reads one kind of data and appends the findings it makes (none when it does not fire).
template <typename Data>
using FindingRuleFn = Status (*)(Data& data, std::vector<Finding>& out);

struct FindingRule {
  const char* id;       // rule id, e.g. "launch_bound"; its findings carry it (host_sync: several)
  const char* summary;  // one line
  // The rule, by the data it reads.
  std::variant<FindingRuleFn<AnalysisContext>, FindingRuleFn<const RanksResult>,
               FindingRuleFn<const ServingMetrics>, FindingRuleFn<const QueueingTail>,
               FindingRuleFn<const ServingTraceJoin>, FindingRuleFn<const TrtEngineResult>,
               FindingRuleFn<const RunsResult>>
      run;
};

// All rules: in priority order among the rules that read the same data (ties in estimated savings
// keep this order).
const std::vector<FindingRule>& FindingRules();

// The input a rule needs, in words: "trace", "ranks", "requests", "requests+trace", "trt engine",
// "run".
std::string_view FindingRuleInput(const FindingRule& rule);

// Runs every rule that reads a trace's context; findings sorted by estimated_savings_ns, largest
// first (Finding::input unset). The rules share the context's iterations, busy unions and windows.
StatusOr<std::vector<Finding>> ComputeFindings(AnalysisContext& context);

// Runs every rule whose data `results` holds (an analysis over several traces, serving results or
// an engine left it there); sorted as above.
StatusOr<std::vector<Finding>> ComputeFindings(const ResultsCache& results);

// Appends `findings` to the report's findings as findings of input `input` (-1: of no one input),
// which stay ranked over every input: equal savings keep input, then rule, order.
void AddFindings(std::vector<Finding> findings, int input, Report& report);

// Registry entry "findings": appends the context's findings (when options().findings.enabled) to
// the report's findings.
Status RunFindings(AnalysisContext& context, int input, Report& report);

// The rules (one file each).
Status RuleLaunchBound(AnalysisContext& context, std::vector<Finding>& out);
Status RuleStartup(AnalysisContext& context, std::vector<Finding>& out);
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
Status RuleFarFromFloor(AnalysisContext& context, std::vector<Finding>& out);
Status RuleBusyButEmpty(AnalysisContext& context, std::vector<Finding>& out);
Status RuleIdleSmsDuringComm(AnalysisContext& context, std::vector<Finding>& out);
// Multi-rank rule: runs once over all inputs (AnalyzeFiles), on the ranks analysis.
Status RuleStraggler(const RanksResult& ranks, std::vector<Finding>& out);
// Rule on the recordings of one run with its process tree (the run analysis).
Status RuleOtherProcessBusy(const RunsResult& runs, std::vector<Finding>& out);
// Rules on serving results (`analyze --requests`, alone or beside the serving process's trace).
Status RulePrefillInterference(const ServingMetrics& metrics, std::vector<Finding>& out);
Status RuleTtftQueueing(const QueueingTail& tail, std::vector<Finding>& out);
Status RuleGcInTokenGaps(const ServingTraceJoin& join, std::vector<Finding>& out);
// Rules on a TensorRT engine (`analyze` of its trtexec / Trex exports).
Status RuleTrtHostBound(const TrtEngineResult& engine, std::vector<Finding>& out);
Status RuleTrtDataTransfers(const TrtEngineResult& engine, std::vector<Finding>& out);
Status RuleTrtReformats(const TrtEngineResult& engine, std::vector<Finding>& out);

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
  // The window holding time t of process pid (LoopFacts::FindWindow); -1 when none or
  // when it is the first iteration.
  int64_t Find(int32_t pid, TimeNs t) const;
  // Iterations after the first.
  int64_t iterations() const { return static_cast<int64_t>(context_.loop().Windows().size()) - 1; }

 private:
  AnalysisContext& context_;
  int64_t first_iteration_ = INT64_MAX;
};
// Ranks findings: largest estimated saving first; ties keep their order.
void SortFindings(std::vector<Finding>& findings);

}  // namespace sightline
