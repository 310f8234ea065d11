// The push two-shot's chunking without a GPU (pipeline_plan.h): for many message sizes, worlds,
// grids and chunk sizes, walks the index ranges exactly as TwoShotPushKernel does (segment s,
// chunk t, thread `first` of the grid, every stride-th vector) and checks that every vector of
// the message is visited once, in its own segment; that the plan has 1..kMaxPipelineChunks chunks
// with no empty chunk after the first; and the plan of a 64 MB message on the default grid.
// Plain main(): the GPU machine builds this with the CUDA toolkit alone.
#include "pipeline_plan.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using sightline::allreduce::ChunkBegin;
using sightline::allreduce::ChunkEnd;
using sightline::allreduce::kMaxPipelineChunks;
using sightline::allreduce::PlanTwoShotPipeline;
using sightline::allreduce::SegBegin;
using sightline::allreduce::TwoShotPipeline;

int failures = 0;
void Fail(const std::string& what) {
  if (++failures <= 20) std::fprintf(stderr, "FAIL: %s\n", what.c_str());
}

std::string Case(int64_t nvec, int world, int blocks, int threads, int iters) {
  return "nvec " + std::to_string(nvec) + ", world " + std::to_string(world) + ", " +
         std::to_string(blocks) + "x" + std::to_string(threads) + ", pipeline " +
         std::to_string(iters);
}

void CheckOne(int64_t nvec, int world, int blocks, int threads, int iters) {
  const std::string name = Case(nvec, world, blocks, threads, iters);
  const TwoShotPipeline plan = PlanTwoShotPipeline(nvec, world, blocks, threads, iters);
  const int64_t stride = static_cast<int64_t>(blocks) * threads;
  const int64_t longest = (nvec + world - 1) / world;
  if (plan.chunks < 1 || plan.chunks > kMaxPipelineChunks) Fail(name + ": chunks out of range");
  if (plan.span <= 0 || plan.span % stride != 0) Fail(name + ": span not a multiple of stride");
  if (plan.span * plan.chunks < longest) Fail(name + ": chunks do not cover a segment");
  if (plan.chunks > 1 && (plan.chunks - 1) * plan.span >= longest) Fail(name + ": empty chunk");
  if (iters == 0 && plan.chunks != 1) Fail(name + ": pipeline 0 is not one chunk");
  std::vector<int> seen(static_cast<size_t>(nvec), 0);
  for (int s = 0; s < world; ++s) {
    for (int t = 0; t < plan.chunks; ++t) {
      const int64_t lo = ChunkBegin(nvec, world, s, t, plan.span);
      const int64_t hi = ChunkEnd(nvec, world, s, t, plan.span);
      for (int64_t first = 0; first < stride; ++first) {
        for (int64_t i = lo + first; i < hi; i += stride) {
          if (i < SegBegin(nvec, world, s) || i >= SegBegin(nvec, world, s + 1)) {
            Fail(name + ": vector " + std::to_string(i) + " outside segment " + std::to_string(s));
            return;
          }
          ++seen[static_cast<size_t>(i)];
        }
      }
    }
  }
  for (int64_t i = 0; i < nvec; ++i) {
    if (seen[static_cast<size_t>(i)] != 1) {
      Fail(name + ": vector " + std::to_string(i) + " visited " +
           std::to_string(seen[static_cast<size_t>(i)]) + " times");
      return;
    }
  }
}

}  // namespace

int main() {
  int cases = 0;
  for (int world = 2; world <= 8; ++world) {
    for (int64_t nvec : {0, 1, 2, 7, 16, 63, 64, 65, 1000, 4099}) {
      for (int blocks : {1, 2, 3}) {
        for (int threads : {1, 4, 5}) {
          for (int iters : {0, 1, 2, 3, 4, 7, 1 << 20}) {
            CheckOne(nvec, world, blocks, threads, iters);
            ++cases;
          }
        }
      }
    }
  }
  // More chunks than the cap at pipeline 1: the chunk grows instead.
  CheckOne(int64_t{2} * kMaxPipelineChunks * 3 + 5, 2, 1, 1, 1);
  ++cases;
  const TwoShotPipeline capped =
      PlanTwoShotPipeline(int64_t{2} * kMaxPipelineChunks * 3 + 5, 2, 1, 1, 1);
  if (capped.chunks > kMaxPipelineChunks || capped.span < 3) Fail("the chunk cap did not hold");
  // 64 MB of bf16 at world 2 on the default grid (128 blocks of 512 threads), 4 vectors per
  // thread per chunk: 2M vectors a segment, 64K a stride, 32 strides, so 8 chunks of 256K.
  const TwoShotPipeline big = PlanTwoShotPipeline((int64_t{64} << 20) / 16, 2, 128, 512, 4);
  if (big.chunks != 8 || big.span != 4 * 128 * 512) {
    Fail("64 MB plan: " + std::to_string(big.chunks) + " chunks of " + std::to_string(big.span));
  }
  if (failures > 0) {
    std::fprintf(stderr, "pipeline plan: %d failures in %d cases\n", failures, cases + 1);
    return 1;
  }
  std::printf("pipeline plan: %d cases, every vector visited once in its segment\n", cases + 1);
  return 0;
}
