// Kernels whose register and shared-memory use differ, for validating the occupancy calculator
// against cudaOccupancyMaxActiveBlocksPerMultiprocessor. occupancy_kernels.cu is compiled several
// times with different -maxrregcount values; each copy registers its kernels here.
#pragma once

#include <string>
#include <vector>

struct KernelVariant {
  std::string name;  // "maxrreg32/acc64_lb256x2_st8k"
  const void* func;  // the __global__ function, for the runtime's occupancy API
  // Launches it: grid, block, dynamic shared memory bytes, on the default stream.
  void (*launch)(int grid, int block, size_t dynamic_smem);
};

// One registration function per compiled copy (occupancy_kernels.cu, -DVARIANT_TAG=...).
void RegisterKernels_r0(std::vector<KernelVariant>& out);
void RegisterKernels_r32(std::vector<KernelVariant>& out);
void RegisterKernels_r40(std::vector<KernelVariant>& out);
void RegisterKernels_r64(std::vector<KernelVariant>& out);
void RegisterKernels_r96(std::vector<KernelVariant>& out);
void RegisterKernels_r128(std::vector<KernelVariant>& out);
void RegisterKernels_r168(std::vector<KernelVariant>& out);
