// The registry of multi-trace analyses. It sits in the pipeline stage because the diff lives above
// the analyses; single-trace analyses are registered in analyses/registry.cc.
#include "analyses/processes/run_view.h"
#include "analyses/ranks/ranks.h"
#include "analyses/serving/serving_metrics.h"
#include "diff/diff_report.h"
#include "pipeline/pipeline.h"

namespace sightline {

const std::vector<MultiTraceAnalysisEntry>& MultiTraceAnalyses() {
  static const std::vector<MultiTraceAnalysisEntry> kAnalyses = {
      {"run_processes",
       "the recordings of one run: its processes on one clock, CPU and GPU in windows",
       TraceSetKind::kRanks, &CreateRunAnalysis},
      {"ranks", "several traces: the ranks of one job side by side, waits, straggler",
       TraceSetKind::kRanks, &CreateRanksAnalysis},
      {"serving", "--requests FILE: TTFT, TPOT, ITL, E2E latency, throughput, goodput, tail causes",
       TraceSetKind::kRanks, &CreateServingAnalysis},
      {"diff", "a baseline against a candidate per kernel, category, range, iteration; CI gate",
       TraceSetKind::kDiff, &CreateDiffAnalysis},
  };
  return kAnalyses;
}

}  // namespace sightline
