// What to do with an occupancy result: waves and the tail effect of a grid, the grid that fills
// the GPU (SMs x resident blocks per SM), the changes that raise occupancy (fewer registers, less
// shared memory, another block size) with the occupancy each gives, and sweeps over block size or
// registers. Built on ComputeOccupancy; docs/kernel/occupancy.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel/gpu_arch.h"
#include "kernel/occupancy.h"

namespace sightline {

struct WaveInfo {
  int64_t grid_blocks = 0;
  int sm_count = 0;
  int64_t blocks_per_wave = 0;  // SMs x resident blocks per SM: the grid that fills the GPU once
  double waves_per_sm = 0;      // grid / blocks_per_wave, as ncu's "Waves Per SM"
  int64_t full_waves = 0;
  int64_t tail_blocks = 0;   // blocks of the last, partial wave (0: the grid is whole waves)
  double tail_fill_pct = 0;  // tail_blocks / blocks_per_wave x 100
  // Share of the kernel's time the GPU is partly idle in the last wave, if every wave takes as
  // long: (1 - tail fill) / number of waves x 100. For a grid under one wave: the unused slots.
  double tail_idle_pct = 0;
};

WaveInfo ComputeWaves(const OccupancyResult& occupancy, int sm_count, int64_t grid_blocks);

// One change that would raise occupancy, with what it gives.
struct OccupancyChange {
  std::string what;  // "registers per thread <= 48"
  std::string how;   // "__launch_bounds__(256, 5) or -maxrregcount=48"
  int active_blocks_per_sm = 0;
  double occupancy_pct = 0;
};

// Changes, most effective first: fewer registers (for the next block count and for the most the
// other limits allow), less shared memory per block, other block sizes (same registers and shared
// memory per block). Empty when occupancy is already 100%.
std::vector<OccupancyChange> SuggestOccupancyChanges(const GpuArch& arch, const OccupancyInput& in,
                                                     const OccupancyResult& current);

enum class SweepKind { kBlockSize, kRegisters };

struct OccupancySweepRow {
  int value = 0;  // the block size or register count of this row
  bool valid = false;
  std::string error;  // why the configuration cannot launch, when !valid
  OccupancyResult result;
};

// Block sizes 32..1024 in steps of 32, or registers 16..255 in steps of 8 (and the input's own
// value), everything else as in `in`.
std::vector<OccupancySweepRow> SweepOccupancy(const GpuArch& arch, const OccupancyInput& in, SweepKind kind);

}  // namespace sightline
