// The published peaks of NVIDIA data-center GPUs (memory bandwidth and dense tensor-core
// throughput), matched by the device name a trace records, for the floor analysis (floor.h).
// Sources (NVIDIA's datasheets, the figures without sparsity): docs/analyses/floor.md, "GPU
// peaks".
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace sightline {

struct GpuPeaks {
  const char* name;    // "H100 SXM"
  double memory_gbps;  // GB/s (10^9 bytes per second)
  double tf32_tflops;  // dense, 10^12 FLOP/s
  double bf16_tflops;  // dense; FP16 is the same on these parts
  double fp8_tflops;   // dense; 0 where the GPU has no FP8 tensor cores
  const char* source;  // the datasheet
};

// The table, most specific names first.
const std::vector<GpuPeaks>& GpuPeaksTable();

// The entry for a device name as CUDA reports it ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-
// 40GB", "NVIDIA L40S"): its words (split at spaces and dashes, case-insensitive) must hold every
// word of an entry's key. Null when none matches.
const GpuPeaks* FindGpuPeaks(std::string_view device_name);

// The dense tensor throughput for elements of `bytes` bytes: 1 FP8 (BF16 where the GPU has no
// FP8), 2 BF16/FP16, 4 TF32. TFLOP/s.
double TensorTflops(const GpuPeaks& peaks, int64_t bytes);

}  // namespace sightline
