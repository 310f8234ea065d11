// The loop facts of one trace (a holder of TraceFacts, facts/trace_facts.h): the iterations
// (iterations.h) found with the facts options' regex, the main iteration set and the loop windows
// the finding rules look at. Each is built once, by the first thread that asks (std::call_once).
// Definitions: docs/metrics.md ("Iterations").
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "facts/facts_options.h"
#include "facts/gpu_time_facts.h"
#include "facts/graph_facts.h"
#include "facts/host_facts.h"
#include "facts/iterations.h"
#include "model/trace.h"

namespace sightline {

// A stretch of the loop the finding rules look at: one iteration of the main iteration set, or,
// when the trace has no iterations, each device's whole active span (pid = -1: every process).
struct LoopWindow {
  int64_t iteration = -1;  // index in the main set; -1 for a whole-trace window
  TimeNs start_ns = 0, end_ns = 0;
  int32_t pid = -1, tid = -1;
  int32_t device = -1;            // the device whose idle time counts
  const Iteration* it = nullptr;  // null for a whole-trace window
};

class LoopFacts {
 public:
  // Borrows `trace`, `options` (the iterations regex) and the facts the iterations are found and
  // measured with, which must outlive the loop facts.
  LoopFacts(const Trace& trace, const FactsOptions& options, GpuTimeFacts& gpu, HostFacts& host,
            GraphFacts& graphs)
      : trace_(trace), options_(options), gpu_(gpu), host_(host), graphs_(graphs) {}
  LoopFacts(const LoopFacts&) = delete;
  LoopFacts& operator=(const LoopFacts&) = delete;

  // The iterations found with FactsOptions::iterations_regex; an error when the regex is invalid.
  StatusOr<const IterationsResult*> Iterations();
  // The main iteration set; null when there are none (or the regex is invalid).
  const IterationSet* MainSet();
  // The loop windows: the main set's iterations after its warm-up steps, or one whole-span
  // window per busy device.
  const std::vector<LoopWindow>& Windows();
  // The window that holds time `t` of process `pid`; -1 when none.
  int64_t FindWindow(int32_t pid, TimeNs t);
  // "iteration 12 (ProfilerStep#12)" or "whole trace".
  std::string WindowLabel(const LoopWindow& w) const;

 private:
  void EnsureWindows();

  const Trace& trace_;
  const FactsOptions& options_;
  GpuTimeFacts& gpu_;
  HostFacts& host_;
  GraphFacts& graphs_;

  std::once_flag iterations_once_;
  std::optional<StatusOr<IterationsResult>> iterations_;
  std::once_flag windows_once_;
  const IterationSet* main_set_ = nullptr;
  std::vector<LoopWindow> windows_;
  std::atomic<size_t> window_hint_{0};  // FindWindow: the last answer (any thread's)
};

}  // namespace sightline
