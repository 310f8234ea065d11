// How the push two-shot (twoshot.cu) cuts a message into segments and pipelined chunks: shared by
// the kernel and the host, so that a test without a GPU walks exactly the kernel's index ranges
// (pipeline_plan_test.cc).
//
// A message of nvec 16-byte vectors has one segment per rank (segment s: [SegBegin(s),
// SegBegin(s+1)), reduced by rank s). A launch of `blocks` blocks of `threads` threads takes
// every stride-th vector (stride = blocks x threads), thread `first` from vector first on. Each
// segment is cut into `chunks` chunks of `span` vectors (a multiple of the stride; the last one
// shorter), the same on every rank since every rank plans from the same arguments.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define SIGHTLINE_AR_HD __host__ __device__
#else
#define SIGHTLINE_AR_HD
#endif

namespace sightline::allreduce {

inline constexpr int kMaxPipelineChunks = 4096;

SIGHTLINE_AR_HD inline int64_t SegBegin(int64_t nvec, int world, int s) { return nvec * s / world; }
// Chunk t of segment s: [ChunkBegin, ChunkEnd).
SIGHTLINE_AR_HD inline int64_t ChunkBegin(int64_t nvec, int world, int s, int t, int64_t span) {
  return SegBegin(nvec, world, s) + t * span;
}
SIGHTLINE_AR_HD inline int64_t ChunkEnd(int64_t nvec, int world, int s, int t, int64_t span) {
  const int64_t e = SegBegin(nvec, world, s + 1), h = ChunkBegin(nvec, world, s, t, span) + span;
  return h < e ? h : e;
}

struct TwoShotPipeline {
  int chunks = 1;    // at least 1, at most kMaxPipelineChunks
  int64_t span = 0;  // vectors of a segment per chunk
};
// pipeline_iters: vectors per thread per chunk (DeviceComm::pipeline_iters; 0 = one chunk);
// raised where the message would need more than kMaxPipelineChunks chunks.
inline TwoShotPipeline PlanTwoShotPipeline(int64_t nvec, int world, int blocks, int threads,
                                           int pipeline_iters) {
  const int64_t stride = static_cast<int64_t>(blocks) * threads;
  const int64_t longest = (nvec + world - 1) / world;  // no segment is longer
  int64_t iters = (longest + stride - 1) / stride;
  if (iters < 1) iters = 1;
  int64_t per = pipeline_iters > 0 ? pipeline_iters : iters;
  if ((iters + per - 1) / per > kMaxPipelineChunks) {
    per = (iters + kMaxPipelineChunks - 1) / kMaxPipelineChunks;
  }
  TwoShotPipeline plan;
  plan.chunks = static_cast<int>((iters + per - 1) / per);
  plan.span = per * stride;
  return plan;
}

}  // namespace sightline::allreduce
