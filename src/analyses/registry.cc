#include "analyses/analysis.h"
#include "analyses/api_summary.h"
#include "analyses/cuda_graphs.h"
#include "analyses/findings/findings.h"
#include "analyses/gpu_metrics.h"
#include "analyses/idle_gaps.h"
#include "analyses/iterations.h"
#include "analyses/kernel_summary.h"
#include "analyses/memops_summary.h"
#include "analyses/memory.h"
#include "analyses/nvtx_projection.h"
#include "analyses/overview.h"
#include "analyses/threads.h"

// Each analysis header declares its Run...Section function; add one line here per analysis. The
// multi-trace analyses (ranks, diff) are registered in pipeline/registry.cc.

namespace sightline {

const std::vector<AnalysisEntry>& Analyses() {
  static const std::vector<AnalysisEntry> kAnalyses = {
      // {"name", "one-line summary", &RunXSection},
      {"overview", "time span, devices, event counts, GPU utilization", &RunOverviewSection},
      {"kernel_summary", "time per kernel (nsys cuda_gpu_kern_sum) and per category",
       &RunKernelSummarySection},
      {"api_summary", "time per CUDA runtime/driver API (nsys cuda_api_sum)",
       &RunApiSummarySection},
      {"memops_summary", "memory copies and sets: time, bytes, bandwidth",
       &RunMemOpsSummarySection},
      {"iterations", "loop iterations: wall time, GPU work, outliers", &RunIterationsSection},
      {"nvtx_projection", "GPU time launched inside each NVTX range", &RunNvtxProjectionSection},
      {"cuda_graphs", "CUDA graph kernels by the ranges open when they were captured",
       &RunCudaGraphsSection},
      {"idle_gaps", "GPU idle gaps by length and host cause", &RunIdleGapsSection},
      {"gpu_metrics", "sampled GPU metrics (SMs active, tensor, DRAM) while busy and idle",
       &RunGpuMetricsSection},
      {"memory", "GPU memory: peak of the trace's allocations, what held it, headroom",
       &RunMemorySection},
      {"threads", "host threads: launching thread, GIL held and waited, who holds it (GIL traces)",
       &RunThreadsSection},
      {"findings", "ranked findings with evidence, fix and estimated saving (--no-findings: off)",
       &RunFindings},
  };
  return kAnalyses;
}

}  // namespace sightline
