#include "analyses/findings/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <exception>
#include <functional>
#include <optional>
#include <vector>

#include "analyses/processes/run_view.h"
#include "analyses/ranks/ranks.h"
#include "analyses/serving/queueing.h"
#include "analyses/serving/serving_metrics.h"
#include "analyses/serving/serving_trace_join.h"
#include "trt/trt_analysis.h"

namespace sightline {

const std::vector<FindingRule>& FindingRules() {
  static const std::vector<FindingRule> kRules = {
      // {"id", "one-line summary", &RuleX}: the rule's parameter says what it reads.
      // Rules on whole results of other inputs (run by the pipeline).
      {"straggler", "across ranks, the others wait in collectives for one rank that arrives last",
       &RuleStraggler},
      {"other_process_busy",
       "the GPUs idle while a process of the run without CUDA works (front end, detokenizer)",
       &RuleOtherProcessBusy},
      {"prefill_interference", "prefills stall the decoding requests' token gaps (ITL tail)",
       &RulePrefillInterference},
      {"ttft_queueing", "the TTFT tail is time waiting to be scheduled (request log)",
       &RuleTtftQueueing},
      {"gc_in_token_gaps", "Python garbage collection in the serving trace makes the ITL tail",
       &RuleGcInTokenGaps},
      {"trt_host_bound", "enqueuing a TensorRT engine takes about as long as its GPU compute",
       &RuleTrtHostBound},
      {"trt_data_transfers", "the engine's measured latency is mostly host-device copies",
       &RuleTrtDataTransfers},
      {"trt_reformats", "reformat layers take a large share of the engine's layer time",
       &RuleTrtReformats},
      // Rules on one trace (run per input by the registry entry "findings").
      {"launch_bound", "GPU idle between many short kernels while the host launches them",
       &RuleLaunchBound},
      {"host_sync", "synchronize calls, blocking copies and pageable async copies in the loop",
       &RuleHostSync},
      {"outlier_iterations", "iterations much slower than the median, and what differs",
       &RuleOutlierIterations},
      {"small_grid", "long kernels whose grid cannot fill the GPU", &RuleSmallGrid},
      {"kernel_chain", "recurring chains of short kernels: fusion candidates", &RuleKernelChain},
      {"sibling_gemms", "the same GEMM twice back to back: concatenate the weights",
       &RuleSiblingGemms},
      {"exposed_comm", "communication kernels not overlapped with compute", &RuleExposedComm},
      {"low_utilization", "stretches where a GPU is mostly idle, and what the host did",
       &RuleLowUtilization},
      {"gil_contention", "the launching thread waits for the Python GIL another thread holds",
       &RuleGilContention},
      {"gc_pauses", "Python garbage collection inside the loop, and the GPU idle it caused",
       &RuleGcPauses},
      {"blocking_os_call", "the launching thread blocks in OS calls inside the loop",
       &RuleBlockingOsCall},
      {"host_bound_pipeline",
       "the GPU waits for the host's work in a typical iteration (responses, Python, the GIL)",
       &RuleHostBoundPipeline},
      {"sm_underfilled",
       "the timeline shows the GPU busy, the sampled metrics show its SMs mostly empty",
       &RuleSmUnderfilled},
      {"startup",
       "compiling, autotuning, graph capture or loading before the first step (once per start)",
       &RuleStartup},
      {"alloc_in_loop", "cudaMalloc/cudaFree or allocator growth inside the iteration loop",
       &RuleAllocInLoop},
      {"graph_recapture", "CUDA graphs captured or instantiated inside the iteration loop",
       &RuleGraphRecapture},
      {"graph_launch_gaps", "GPU idle between CUDA graph replays while the host works",
       &RuleGraphLaunchGaps},
      {"graph_variants", "many distinct CUDA graphs replayed (batch-size buckets), capture cost",
       &RuleGraphVariants},
      {"graph_padding", "replayed CUDA graphs run a larger batch than the iteration log's real one",
       &RuleGraphPadding},
      {"memory_fragmentation",
       "the caching allocator reserves far more than is allocated at the peak",
       &RuleMemoryFragmentation},
      {"memory_near_capacity", "peak device memory close to the device's capacity",
       &RuleMemoryNearCapacity},
      {"memory_bound_phase",
       "busy stretches with DRAM near its peak and tensor cores idle (sampled)",
       &RuleMemoryBoundPhase},
      {"far_from_floor", "steady steps far above the least time the GPU allows (--model-config)",
       &RuleFarFromFloor},
      {"busy_but_empty",
       "GR Active high while SMs Active and SM Issue stay low: tiny kernels (sampled)",
       &RuleBusyButEmpty},
      {"idle_sms_during_comm", "SMs mostly idle while communication runs with no compute beside it",
       &RuleIdleSmsDuringComm},
  };
  return kRules;
}

LoopAfterWarmup::LoopAfterWarmup(AnalysisContext& context) : context_(context) {
  for (const LoopWindow& w : context.loop().Windows()) {
    first_iteration_ = std::min(first_iteration_, w.iteration);
  }
}

int64_t LoopAfterWarmup::Find(int32_t pid, TimeNs t) const {
  const int64_t w = context_.loop().FindWindow(pid, t);
  if (w < 0 || context_.loop().Windows()[w].iteration == first_iteration_) return -1;
  return w;
}

std::string Percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "n/a";
}

void SortFindings(std::vector<Finding>& findings) {
  // The steady state's findings first (a start-up cost paid once is not a saving per step),
  // each group by estimated saving.
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.once_per_start != b.once_per_start) return b.once_per_start;
    return a.estimated_savings_ns > b.estimated_savings_ns;
  });
}

std::string_view FindingRuleInput(const FindingRule& rule) {
  static constexpr std::array<std::string_view, 7> kInputs = {
      "trace", "ranks", "requests", "requests", "requests+trace", "trt engine", "run"};
  static_assert(kInputs.size() == std::variant_size_v<decltype(FindingRule::run)>);
  return kInputs[rule.run.index()];
}

namespace {

Status RunRule(const FindingRule& rule, auto fn, auto& data, std::vector<Finding>& out) {
  Status s = fn(data, out);
  return s.ok() ? s : s.WithPrefix(fmt::format("finding rule {}", rule.id));
}

}  // namespace

StatusOr<std::vector<Finding>> ComputeFindings(AnalysisContext& context) {
  std::vector<Finding> out;
  if (!context.trace().HasGpuWork()) return out;
  // Launches without kernels: the GPU side is missing, and every rule would read it as idle.
  if (context.trace().kernels.size() == 0 &&
      context.trace().diagnostics.Count(DiagCode::kLaunchesWithoutKernels) > 0) {
    return out;
  }
  // The rules read the iterations through the context; a bad regex is reported here once.
  RETURN_IF_ERROR(context.loop().Iterations().status());
  std::vector<const FindingRule*> rules;
  for (const FindingRule& rule : FindingRules()) {
    if (std::holds_alternative<FindingRuleFn<AnalysisContext>>(rule.run)) rules.push_back(&rule);
  }
  // With a work share, the rules run side by side on the run's idle analysis threads (they share
  // the context's facts, each built once); otherwise one after the other here. Each rule's
  // findings and status are kept apart, then taken in the rules' order, so the findings and the
  // first error are the same either way.
  std::vector<std::vector<Finding>> found(rules.size());
  std::vector<Status> status(rules.size(), Status::Ok());
  std::vector<std::exception_ptr> thrown(rules.size());
  ResultsCache::Reader* reader = ResultsCache::Reader::Current();
  std::vector<std::function<void()>> tasks;
  for (size_t r = 0; r < rules.size(); ++r) {
    tasks.push_back([&, r] {
      std::optional<ResultsCache::Reader> helping;
      if (reader != nullptr && ResultsCache::Reader::Current() != reader) helping.emplace(*reader);
      try {
        status[r] = RunRule(*rules[r], std::get<FindingRuleFn<AnalysisContext>>(rules[r]->run),
                            context, found[r]);
      } catch (...) {
        thrown[r] = std::current_exception();  // rethrown on this thread (out of memory)
      }
    });
  }
  if (WorkShare* share = context.work_share()) {
    share->Run(tasks);
  } else {
    for (const std::function<void()>& task : tasks) task();
  }
  for (size_t r = 0; r < rules.size(); ++r) {
    if (thrown[r]) std::rethrow_exception(thrown[r]);
    RETURN_IF_ERROR(status[r]);
    for (Finding& f : found[r]) out.push_back(std::move(f));
  }
  SortFindings(out);
  return out;
}

StatusOr<std::vector<Finding>> ComputeFindings(const ResultsCache& results) {
  std::vector<Finding> out;
  for (const FindingRule& rule : FindingRules()) {
    Status s = std::visit(
        [&]<typename Data>(FindingRuleFn<Data> fn) -> Status {
          if constexpr (std::is_const_v<Data>) {
            if (const Data* data = results.Find<std::remove_const_t<Data>>()) {
              return RunRule(rule, fn, *data, out);
            }
          }
          return Status::Ok();  // a trace's rule (ComputeFindings(context)), or no such result
        },
        rule.run);
    RETURN_IF_ERROR(s);
  }
  SortFindings(out);
  return out;
}

void AddFindings(std::vector<Finding> findings, int input, Report& report) {
  if (findings.empty()) return;
  for (Finding& f : findings) {
    f.input = input;
    report.findings.push_back(std::move(f));
  }
  SortFindings(report.findings);
}

Status RunFindings(AnalysisContext& context, int input, Report& report) {
  if (!context.options().findings.enabled) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<Finding> findings, ComputeFindings(context));
  AddFindings(std::move(findings), input, report);
  return Status::Ok();
}

}  // namespace sightline
