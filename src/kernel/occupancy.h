// Occupancy calculator: the block limits (registers, shared memory, warps, blocks per SM) and the
// theoretical occupancy of one launch configuration, with the meaning Nsight Compute's Occupancy
// and Launch Statistics sections give them and the rules of NVIDIA's occupancy calculator
// (cuda_occupancy.h). Rules and sources: docs/kernel/occupancy.md. Standard library only (the GPU
// validation program in tests/kernel/gpu_validation compiles this file with nvcc).
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernel/gpu_arch.h"

namespace sightline {

struct OccupancyInput {
  int block_size = 0;            // threads per block
  int registers_per_thread = 0;  // as ptxas -v / cudaFuncAttributes::numRegs / ncu report it
  int64_t static_smem_bytes = 0;
  int64_t dynamic_smem_bytes = 0;
  // The shared-memory carveout (ncu's "Shared Memory Configuration Size"), bytes. -1: the driver
  // picks it. A value between two carveouts means the next larger one; one too small for a single
  // block is raised, as the driver does.
  int64_t smem_config_bytes = -1;
};

// Bits of OccupancyResult::limiters.
enum OccupancyLimiter : unsigned {
  kLimitRegisters = 1u << 0,
  kLimitSharedMemory = 1u << 1,
  kLimitWarps = 1u << 2,
  kLimitBlocksPerSm = 1u << 3,
};

// A block limit the resource does not impose (no registers, or no shared memory on sm_7x).
inline constexpr int kUnlimitedBlocks = INT_MAX;

enum class SmemConfigSource {
  kDriver,  // not given: the carveout the driver is expected to pick (docs/kernel/occupancy.md)
  kGiven,   // as given (rounded up to a carveout the SM offers)
  kRaised,  // given, but too small for one block: raised to the smallest that holds one
};

struct OccupancyResult {
  int warps_per_block = 0;
  int registers_per_warp = 0;         // allocated: registers x 32 rounded up to the allocation unit
  int registers_per_block = 0;        // allocated
  int64_t driver_smem_per_block = 0;  // the driver's reservation
  int64_t smem_per_block = 0;  // static + dynamic + reservation, rounded up to the allocation unit
  int64_t smem_config_bytes = 0;  // the carveout block_limit_shared_mem is computed against
  SmemConfigSource smem_config_source = SmemConfigSource::kDriver;

  int block_limit_registers = 0;
  int block_limit_shared_mem = 0;               // at smem_config_bytes, as ncu reports it
  int block_limit_shared_mem_max_carveout = 0;  // at the largest carveout
  int block_limit_warps = 0;
  int block_limit_sm = 0;

  int active_blocks_per_sm = 0;  // what cudaOccupancyMaxActiveBlocksPerMultiprocessor returns
  int active_warps_per_sm = 0;   // ncu "Theoretical Active Warps per SM"
  int max_warps_per_sm = 0;
  double theoretical_occupancy_pct = 0;  // active warps / max warps x 100
  unsigned limiters = 0;                 // OccupancyLimiter bits of the limits equal to the minimum

  std::vector<std::string> notes;  // opt-in needed, carveout raised, ...
};

// InvalidArgument for configurations that cannot launch (block size over the maximum, registers
// over 255, shared memory over what a block may use, registers over the per-block file), with a
// message that says what the limit is and what would fit.
StatusOr<OccupancyResult> ComputeOccupancy(const GpuArch& arch, const OccupancyInput& input);

// The smallest carveout the SM offers that holds `bytes`; -1 when none does.
int64_t AlignUpToSmemConfig(const GpuArch& arch, int64_t bytes);

// The most registers per thread with which a block of `block_size` threads still launches.
int MaxRegistersForBlockSize(const GpuArch& arch, int block_size);

// "registers", "shared memory + warps", ... for a limiter mask.
std::string LimiterNames(unsigned limiters);

}  // namespace sightline
