// The findings engine: rules that read analysis results and turn them into ranked advice
// (DESIGN.md §Findings). Each rule is one small file rule_<id>.cc; the analyses the rules need are
// computed once into a FindingsContext. Input: one Trace. Output: findings, largest estimated
// saving first. Rules, thresholds and estimates: docs/analyses/findings.md.
#pragma once

#include <string>
#include <vector>

#include "analyses/analysis.h"
#include "analyses/idle_gaps.h"
#include "analyses/intervals.h"
#include "analyses/iterations.h"
#include "analyses/ranks.h"
#include "base/status.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

// A stretch of the loop the rules look at: one iteration of the main iteration set, or, when the
// trace has no iterations, each device's whole active span (pid = -1: every process).
struct LoopWindow {
  int64_t iteration = -1;  // index in the main set; -1 for a whole-trace window
  TimeNs start_ns = 0, end_ns = 0;
  int32_t pid = -1, tid = -1;
  int32_t device = -1;            // the device whose idle time counts
  const Iteration* it = nullptr;  // null for a whole-trace window
};

// Analysis results the rules share, computed once per trace.
// Holds pointers into its own vectors: movable (the buffers move with it), not copyable.
struct FindingsContext {
  FindingsContext() = default;
  FindingsContext(FindingsContext&&) = default;
  FindingsContext& operator=(FindingsContext&&) = default;
  FindingsContext(const FindingsContext&) = delete;
  FindingsContext& operator=(const FindingsContext&) = delete;

  const AnalyzeOptions* options = nullptr;
  IterationsResult iterations;
  const IterationSet* main_set = nullptr;  // null when the trace has no iterations
  std::vector<LoopWindow> windows;         // iterations, or whole-trace windows
  // Per device id (index = device id, empty for devices without work): the union of GPU work.
  std::vector<std::vector<Interval>> busy;
  DurationNs total_gpu_time_ns = 0;  // sum of kernel durations over all devices
  // Per pid (sorted by pid): the merged intervals of its host-blocking calls (synchronize calls
  // and synchronous memcpy/memset calls), which the host_sync rule owns.
  std::vector<std::pair<int32_t, std::vector<Interval>>> blocking_calls;
  const std::vector<Interval>& BlockingCalls(int32_t pid) const;

  const std::vector<Interval>& Busy(int32_t device) const;
  // The window that holds time `t` of process `pid`; -1 when none.
  int64_t FindWindow(int32_t pid, TimeNs t) const;
  // "iteration 12 (ProfilerStep#12)" or "whole trace".
  std::string WindowLabel(const Trace& trace, const LoopWindow& w) const;
};

using FindingRuleFn = Status (*)(const Trace& trace, const FindingsContext& context,
                                 std::vector<Finding>& out);

struct FindingRule {
  const char* id;       // finding id, e.g. "launch_bound"
  const char* summary;  // one line
  FindingRuleFn run;
};

// All rules, in priority order (ties in estimated savings keep this order).
const std::vector<FindingRule>& FindingRules();

StatusOr<FindingsContext> BuildFindingsContext(const Trace& trace, const AnalyzeOptions& options);

// Runs every rule; findings sorted by estimated_savings_ns, largest first (Finding::input unset).
StatusOr<std::vector<Finding>> ComputeFindings(const Trace& trace, const AnalyzeOptions& options);

// The same on a context the caller built (and may use afterwards, e.g. for its iterations).
StatusOr<std::vector<Finding>> ComputeFindings(const Trace& trace, const FindingsContext& context);

// The rules (one file each).
Status RuleLaunchBound(const Trace& trace, const FindingsContext& context,
                       std::vector<Finding>& out);
Status RuleHostSync(const Trace& trace, const FindingsContext& context, std::vector<Finding>& out);
Status RuleOutlierIterations(const Trace& trace, const FindingsContext& context,
                             std::vector<Finding>& out);
Status RuleSmallGrid(const Trace& trace, const FindingsContext& context, std::vector<Finding>& out);
Status RuleKernelChain(const Trace& trace, const FindingsContext& context,
                       std::vector<Finding>& out);
Status RuleExposedComm(const Trace& trace, const FindingsContext& context,
                       std::vector<Finding>& out);
Status RuleLowUtilization(const Trace& trace, const FindingsContext& context,
                          std::vector<Finding>& out);
// Multi-rank rule: runs once over all inputs (AnalyzeFiles), on the ranks analysis.
Status RuleStraggler(const RanksResult& ranks, std::vector<Finding>& out);

// Helpers the rules share.
// The part of [a, b) that `merged` (disjoint, sorted) leaves idle.
inline DurationNs IdleWithin(const std::vector<Interval>& merged, TimeNs a, TimeNs b) {
  return b > a ? (b - a) - BusyWithin(merged, a, b) : 0;
}
// Time the GPU stays idle after `t`: until the next busy interval starts (0 when busy at t or no
// later work).
DurationNs IdleAfter(const std::vector<Interval>& merged, TimeNs t);
std::string Percent(double part, double whole);  // "42.1%"
// A call that blocks the host until the GPU work it waits for is done: synchronize calls and
// memcpy/memset calls without "Async" in the name.
bool IsBlockingCall(const Trace& trace, size_t api_row);

}  // namespace sightline
