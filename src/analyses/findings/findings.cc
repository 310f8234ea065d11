#include "analyses/findings/findings.h"

#include <fmt/format.h>

#include <algorithm>

namespace sightline {

const std::vector<FindingRule>& FindingRules() {
  static const std::vector<FindingRule> kRules = {
      {"launch_bound", "GPU idle between many short kernels while the host launches them",
       &RuleLaunchBound},
      {"host_sync", "synchronize calls, blocking copies and pageable async copies in the loop",
       &RuleHostSync},
      {"outlier_iterations", "iterations much slower than the median, and what differs",
       &RuleOutlierIterations},
      {"small_grid", "long kernels whose grid cannot fill the GPU", &RuleSmallGrid},
      {"kernel_chain", "recurring chains of short kernels: fusion candidates", &RuleKernelChain},
      {"exposed_comm", "communication kernels not overlapped with compute", &RuleExposedComm},
      {"low_utilization", "stretches where a GPU is mostly idle, and what the host did",
       &RuleLowUtilization},
  };
  return kRules;
}

const std::vector<Interval>& FindingsContext::Busy(int32_t device) const {
  static const std::vector<Interval> kEmpty;
  if (device < 0 || static_cast<size_t>(device) >= busy.size()) return kEmpty;
  return busy[device];
}

int64_t FindingsContext::FindWindow(int32_t pid, TimeNs t) const {
  // Iteration windows are sorted and disjoint; whole-trace windows (one per device) overlap, and
  // the first that holds t is taken.
  if (main_set == nullptr) {
    for (size_t w = 0; w < windows.size(); ++w) {
      if (t >= windows[w].start_ns && t < windows[w].end_ns) return static_cast<int64_t>(w);
    }
    return -1;
  }
  auto it = std::upper_bound(windows.begin(), windows.end(), t,
                             [](TimeNs v, const LoopWindow& w) { return v < w.start_ns; });
  if (it == windows.begin()) return -1;
  --it;
  if (t >= it->end_ns || pid != it->pid) return -1;
  return it - windows.begin();
}

std::string FindingsContext::WindowLabel(const Trace& trace, const LoopWindow& w) const {
  if (w.it == nullptr) return "whole trace";
  return fmt::format("iteration {} ({})", w.iteration, trace.str(w.it->name));
}

const std::vector<Interval>& FindingsContext::BlockingCalls(int32_t pid) const {
  static const std::vector<Interval> kEmpty;
  auto it = std::lower_bound(blocking_calls.begin(), blocking_calls.end(), pid,
                             [](const auto& e, int32_t p) { return e.first < p; });
  if (it == blocking_calls.end() || it->first != pid) return kEmpty;
  return it->second;
}

bool IsBlockingCall(const Trace& trace, size_t row) {
  const ApiClass c = trace.api_calls.api_class[row];
  if (c == ApiClass::kSync) return true;
  if (c != ApiClass::kMemcpy && c != ApiClass::kMemset) return false;
  return trace.str(trace.api_calls.name[row]).find("Async") == std::string_view::npos;
}

DurationNs IdleAfter(const std::vector<Interval>& merged, TimeNs t) {
  auto it = std::upper_bound(merged.begin(), merged.end(), t,
                             [](TimeNs v, const Interval& i) { return v < i.start_ns; });
  if (it == merged.end()) return 0;  // no later work: the loop ended, nothing to recover
  if (it != merged.begin() && std::prev(it)->end_ns > t) return 0;  // busy at t
  return it->start_ns - t;
}

std::string Percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "n/a";
}

StatusOr<FindingsContext> BuildFindingsContext(const Trace& trace, const AnalyzeOptions& options) {
  FindingsContext c;
  c.options = &options;
  IterationsOptions io;
  io.name_regex = options.iterations_regex;
  ASSIGN_OR_RETURN(c.iterations, ComputeIterations(trace, io));

  int32_t max_device = -1;
  for (int32_t d : trace.kernels.device) max_device = std::max(max_device, d);
  for (int32_t d : trace.memops.device) max_device = std::max(max_device, d);
  c.busy.resize(max_device + 1);
  for (int32_t d = 0; d <= max_device; ++d) c.busy[d] = MergedGpuIntervals(trace, d);
  for (size_t k = 0; k < trace.kernels.size(); ++k) c.total_gpu_time_ns += trace.kernels.dur_ns(k);

  {
    std::vector<std::pair<int32_t, Interval>> calls;
    for (size_t r = 0; r < trace.api_calls.size(); ++r) {
      if (IsBlockingCall(trace, r)) {
        calls.push_back({trace.api_calls.pid[r],
                         Interval{trace.api_calls.start_ns[r], trace.api_calls.end_ns[r]}});
      }
    }
    std::stable_sort(calls.begin(), calls.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < calls.size();) {
      size_t j = i;
      std::vector<Interval> v;
      while (j < calls.size() && calls[j].first == calls[i].first) v.push_back(calls[j++].second);
      c.blocking_calls.push_back({calls[i].first, MergeIntervals(std::move(v))});
      i = j;
    }
  }

  if (!c.iterations.sets.empty() && !c.iterations.sets[0].iterations.empty()) {
    c.main_set = &c.iterations.sets[0];
    // The device the loop's process used most; the first of its devices otherwise.
    int32_t device = -1;
    DurationNs best = -1;
    for (int32_t d : c.main_set->devices) {
      const DurationNs t = TotalLength(c.Busy(d));
      if (t > best) best = t, device = d;
    }
    for (const Iteration& it : c.main_set->iterations) {
      c.windows.push_back(LoopWindow{it.index, it.start_ns, it.end_ns, c.main_set->pid,
                                     c.main_set->tid, device, &it});
    }
  } else {
    for (int32_t d = 0; d <= max_device; ++d) {
      if (c.busy[d].empty()) continue;
      c.windows.push_back(
          LoopWindow{-1, c.busy[d].front().start_ns, c.busy[d].back().end_ns, -1, -1, d, nullptr});
    }
  }
  return c;
}

StatusOr<std::vector<Finding>> ComputeFindings(const Trace& trace, const AnalyzeOptions& options) {
  if (!trace.HasGpuWork()) return std::vector<Finding>();
  ASSIGN_OR_RETURN(FindingsContext context, BuildFindingsContext(trace, options));
  return ComputeFindings(trace, context);
}

StatusOr<std::vector<Finding>> ComputeFindings(const Trace& trace, const FindingsContext& context) {
  std::vector<Finding> out;
  if (!trace.HasGpuWork()) return out;
  for (const FindingRule& rule : FindingRules()) {
    Status s = rule.run(trace, context, out);
    if (!s.ok()) return s.WithPrefix(fmt::format("finding rule {}", rule.id));
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return a.estimated_savings_ns > b.estimated_savings_ns;
  });
  return out;
}

}  // namespace sightline
