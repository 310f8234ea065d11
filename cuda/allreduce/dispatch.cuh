// Turns the run-time dtype and world size into the kernels' template arguments: T is the element
// type, K the world size rounded up to 2, 4 or 8 (loops over ranks unroll to K, guarded by world).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "comm.h"

namespace sightline::allreduce {

template <typename Fn>
cudaError_t DispatchTypeAndRanks(Dtype d, int world, Fn&& fn) {
  auto by_ranks = [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    if (world <= 2) return fn(T{}, std::integral_constant<int, 2>{});
    if (world <= 4) return fn(T{}, std::integral_constant<int, 4>{});
    return fn(T{}, std::integral_constant<int, 8>{});
  };
  switch (d) {
    case Dtype::kBf16:
      return by_ranks(__nv_bfloat16{});
    case Dtype::kFp16:
      return by_ranks(__half{});
    case Dtype::kFp32:
      return by_ranks(float{});
  }
  return cudaErrorInvalidValue;
}

inline int BlocksFor(int64_t work_items, int per_block, int max_blocks) {
  int64_t b = (work_items + per_block - 1) / per_block;
  if (b < 1) b = 1;
  if (b > max_blocks) b = max_blocks;
  if (b > kMaxBlocks) b = kMaxBlocks;
  return static_cast<int>(b);
}

}  // namespace sightline::allreduce
