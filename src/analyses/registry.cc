#include <fmt/format.h>

#include <cstring>

#include "analyses/api_summary/api_summary.h"
#include "analyses/common/analysis.h"
#include "analyses/common/analysis_context.h"
#include "analyses/cuda_graphs/cuda_graphs.h"
#include "analyses/findings/findings.h"
#include "analyses/floor/floor.h"
#include "analyses/gpu_metrics/gpu_metrics.h"
#include "analyses/idle_gaps/idle_gaps.h"
#include "analyses/iterations/iterations_section.h"
#include "analyses/kernel_summary/kernel_summary.h"
#include "analyses/memops_summary/memops_summary.h"
#include "analyses/memory/memory.h"
#include "analyses/nvtx_projection/nvtx_projection.h"
#include "analyses/overview/overview.h"
#include "analyses/phases/phases.h"
#include "analyses/processes/processes.h"
#include "analyses/threads/threads.h"

// Each analysis header declares its Run...Section function; add one line here per analysis, with
// the entries whose whole results it reads (its Cached...(context) calls, its rules' included):
// `needs` orders the pipeline's threads, and reading an undeclared one fails (tests/
// analysis_needs_test.cc runs each entry with only its needs computed). The multi-trace analyses
// (ranks, diff) are registered in pipeline/registry.cc.

namespace sightline {

const std::vector<AnalysisEntry>& Analyses() {
  static const std::vector<AnalysisEntry> kAnalyses = {
      // {"name", "one-line summary", &RunXSection, {"needs", ...}},
      {"overview",
       "time span, devices, event counts, GPU utilization",
       &RunOverviewSection,
       {},
       /*timeline=*/true},
      {"kernel_summary",
       "time per kernel (nsys cuda_gpu_kern_sum) and per category",
       &RunKernelSummarySection,
       {},
       /*timeline=*/true},
      {"api_summary",
       "time per CUDA runtime/driver API (nsys cuda_api_sum)",
       &RunApiSummarySection,
       {},
       /*timeline=*/true},
      {"memops_summary",
       "memory copies and sets: time, bytes, bandwidth",
       &RunMemOpsSummarySection,
       {},
       /*timeline=*/true},
      {"iterations",
       "loop iterations: wall time, GPU work, outliers",
       &RunIterationsSection,
       {},
       /*timeline=*/true},
      {"nvtx_projection",
       "GPU time launched inside each NVTX range",
       &RunNvtxProjectionSection,
       {},
       /*timeline=*/true},
      {"phases",
       "start-up (compiling, autotuning, capture, loading), warm-up and steady state, with times",
       &RunPhasesSection,
       {},
       /*timeline=*/true},
      {"cuda_graphs", "CUDA graph kernels by the ranges open when they were captured",
       &RunCudaGraphsSection},
      {"idle_gaps",
       "GPU idle gaps by length and host cause",
       &RunIdleGapsSection,
       {},
       /*timeline=*/true},
      {"gpu_metrics", "sampled GPU metrics (SMs active, tensor, DRAM) while busy and idle",
       &RunGpuMetricsSection},
      {"memory", "GPU memory: peak of the trace's allocations, what held it, headroom",
       &RunMemorySection},
      {"processes", "the run's processes: parent, life, CPU time, CPU while the GPU idled",
       &RunProcessesSection},
      {"threads", "host threads: launching thread, GIL held and waited, who holds it (GIL traces)",
       &RunThreadsSection},
      {"floor",
       "how far each step is from the least time the GPU allows (--model-config)",
       &RunFloorSection,
       {},
       /*timeline=*/true},
      {"findings",
       "ranked findings with evidence, fix and estimated saving (--no-findings: off)",
       &RunFindings,
       {"gpu_metrics", "memory", "threads", "phases", "floor"}},
  };
  return kAnalyses;
}

StatusOr<std::vector<std::vector<size_t>>> AnalysisNeeds(
    const std::vector<AnalysisEntry>& analyses) {
  std::vector<std::vector<size_t>> needs(analyses.size());
  for (size_t i = 0; i < analyses.size(); ++i) {
    for (const char* name : analyses[i].needs) {
      size_t j = 0;
      while (j < analyses.size() && std::strcmp(analyses[j].name, name) != 0) ++j;
      if (j == analyses.size()) {
        return InternalError(
            fmt::format("analysis '{}' needs '{}', which is no analysis", analyses[i].name, name));
      }
      needs[i].push_back(j);
    }
  }
  // Acyclic: a depth-first walk that meets an entry still on its path has found a cycle.
  enum : uint8_t { kNew, kOnPath, kDone };
  std::vector<uint8_t> state(analyses.size(), kNew);
  std::vector<std::pair<size_t, size_t>> path;  // (entry, next need to visit)
  for (size_t root = 0; root < analyses.size(); ++root) {
    if (state[root] != kNew) continue;
    state[root] = kOnPath;
    path.push_back({root, 0});
    while (!path.empty()) {
      auto& [i, next] = path.back();
      if (next == needs[i].size()) {
        state[i] = kDone;
        path.pop_back();
        continue;
      }
      const size_t j = needs[i][next++];
      if (state[j] == kOnPath) {
        return InternalError(fmt::format("the needs of analyses '{}' and '{}' form a cycle",
                                         analyses[i].name, analyses[j].name));
      }
      if (state[j] == kNew) {
        state[j] = kOnPath;
        path.push_back({j, 0});
      }
    }
  }
  return needs;
}

Status RunAnalysis(const AnalysisEntry& entry, AnalysisContext& context, int input, Report& report,
                   std::vector<std::string>* asked) {
  ResultsCache::Reader reader(entry.name, entry.needs);
  Status s = entry.run(context, input, report);
  if (asked != nullptr) *asked = reader.asked();
  return s;
}

}  // namespace sightline
