// Occupancy rules, in the order NVIDIA's calculator applies them (cuda_occupancy.h,
// cudaOccMaxActiveBlocksPerMultiprocessor): registers per sub-partition, warps, blocks per SM,
// shared memory against the carveout; the minimum is the number of resident blocks.
#include "kernel/occupancy.h"

#include <algorithm>

namespace sightline {
namespace {

int DivideRoundUp(int64_t x, int64_t y) { return static_cast<int>((x + y - 1) / y); }
int64_t RoundUp(int64_t x, int64_t y) { return (x + y - 1) / y * y; }

std::string Bytes(int64_t b) {
  if (b > 0 && b % 1024 == 0) return std::to_string(b / 1024) + " KiB";
  return std::to_string(b) + " bytes";
}

int RegistersPerWarp(const GpuArch& arch, int registers) {
  return static_cast<int>(
      RoundUp(static_cast<int64_t>(registers) * arch.warp_size, arch.register_alloc_unit));
}

// The hardware checks a block's registers as if its warps were spread over all sub-partitions,
// so the warp count is rounded up to a multiple of the sub-partitions (cuda_occupancy.h).
bool RegistersFitBlock(const GpuArch& arch, int registers, int warps) {
  const int64_t per_warp = RegistersPerWarp(arch, registers);
  const int64_t assumed = per_warp * RoundUp(warps, arch.sub_partitions);
  return assumed <= arch.max_registers_per_block &&
         per_warp * warps <= arch.max_registers_per_block &&
         registers <= arch.max_registers_per_thread;
}

int BlockLimitRegisters(const GpuArch& arch, int registers, int warps) {
  const int per_warp = RegistersPerWarp(arch, registers);
  if (per_warp == 0) return kUnlimitedBlocks;
  // Registers are split evenly among the sub-partitions and a warp lives in one of them.
  const int warps_per_sub_partition = arch.registers_per_sm / arch.sub_partitions / per_warp;
  return warps_per_sub_partition * arch.sub_partitions / warps;
}

int BlockLimitSmem(int64_t config, int64_t smem_per_block) {
  if (smem_per_block == 0) return kUnlimitedBlocks;
  return static_cast<int>(config / smem_per_block);
}

// The carveout the driver picks when the application sets none. NVIDIA does not document the
// rule; this one reproduced 74 of 75 launches measured with Nsight Compute on an H100
// (docs/kernel/occupancy.md, "Which carveout the driver picks"): room for the resident blocks,
// at least 32 KiB when the kernel uses no shared memory of its own, and room for twice the
// resident blocks (up to 132 KiB) when it does. A single resident block gets the smallest fit.
int64_t DriverSmemConfig(const GpuArch& arch, const OccupancyResult& r, int64_t requested) {
  const int64_t max_config = arch.shared_mem_configs.back();
  const int others = std::min({r.block_limit_registers, r.block_limit_warps, r.block_limit_sm});
  const int blocks = std::min(others, r.block_limit_shared_mem_max_carveout);
  const int64_t needed = static_cast<int64_t>(blocks) * r.smem_per_block;
  int64_t config = AlignUpToSmemConfig(arch, needed);
  if (config < 0) return max_config;
  if (blocks >= 2) {
    const int64_t headroom =
        requested == 0 ? 32 * 1024 : std::min({2 * needed, int64_t{132 * 1024}, max_config});
    config = std::max(config, AlignUpToSmemConfig(arch, headroom));
  }
  return config;
}

}  // namespace

int64_t AlignUpToSmemConfig(const GpuArch& arch, int64_t bytes) {
  for (int64_t c : arch.shared_mem_configs) {
    if (bytes <= c) return c;
  }
  return -1;
}

int MaxRegistersForBlockSize(const GpuArch& arch, int block_size) {
  const int warps = DivideRoundUp(block_size, arch.warp_size);
  for (int r = arch.max_registers_per_thread; r > 0; --r) {
    if (RegistersFitBlock(arch, r, warps)) return r;
  }
  return 0;
}

std::string LimiterNames(unsigned limiters) {
  std::string out;
  auto add = [&](unsigned bit, const char* name) {
    if ((limiters & bit) == 0) return;
    if (!out.empty()) out += " + ";
    out += name;
  };
  add(kLimitRegisters, "registers");
  add(kLimitSharedMemory, "shared memory");
  add(kLimitWarps, "warps");
  add(kLimitBlocksPerSm, "blocks per SM");
  return out.empty() ? "none" : out;
}

StatusOr<OccupancyResult> ComputeOccupancy(const GpuArch& arch, const OccupancyInput& in) {
  if (in.block_size < 1 || in.block_size > arch.max_threads_per_block) {
    return InvalidArgumentError("block size " + std::to_string(in.block_size) +
                                " is out of range: a block has 1 to " +
                                std::to_string(arch.max_threads_per_block) + " threads");
  }
  if (in.registers_per_thread < 0 || in.registers_per_thread > arch.max_registers_per_thread) {
    return InvalidArgumentError(std::to_string(in.registers_per_thread) +
                                " registers per thread is out of range: a " + "thread uses 0 to " +
                                std::to_string(arch.max_registers_per_thread) +
                                " registers (ptxas spills to local memory beyond that)");
  }
  if (in.static_smem_bytes < 0 || in.dynamic_smem_bytes < 0) {
    return InvalidArgumentError("shared memory sizes must not be negative");
  }
  if (in.static_smem_bytes > arch.shared_mem_per_block_default) {
    return InvalidArgumentError("static shared memory of " + Bytes(in.static_smem_bytes) +
                                " is over the " + Bytes(arch.shared_mem_per_block_default) +
                                " a kernel may declare statically; use dynamic shared memory");
  }
  const int64_t requested = in.static_smem_bytes + in.dynamic_smem_bytes;
  if (requested > arch.shared_mem_per_block_optin) {
    return InvalidArgumentError(
        "shared memory of " + Bytes(requested) + " per block (static + dynamic) is over the " +
        Bytes(arch.shared_mem_per_block_optin) + " a block may use on " + arch.name);
  }

  OccupancyResult r;
  r.max_warps_per_sm = arch.max_warps_per_sm;
  r.warps_per_block = DivideRoundUp(in.block_size, arch.warp_size);
  r.registers_per_warp = RegistersPerWarp(arch, in.registers_per_thread);
  r.registers_per_block = r.registers_per_warp * r.warps_per_block;
  if (!RegistersFitBlock(arch, in.registers_per_thread, r.warps_per_block)) {
    return InvalidArgumentError(
        "a block of " + std::to_string(in.block_size) + " threads with " +
        std::to_string(in.registers_per_thread) + " registers per thread needs more than the " +
        std::to_string(arch.max_registers_per_block) +
        " registers a block may have (the launch fails with 'too many resources requested'); "
        "at this block size use at most " +
        std::to_string(MaxRegistersForBlockSize(arch, in.block_size)) +
        " registers per thread (__launch_bounds__(" + std::to_string(in.block_size) + "))");
  }

  r.driver_smem_per_block = arch.reserved_shared_mem_per_block;
  r.smem_per_block = RoundUp(requested + r.driver_smem_per_block, arch.shared_mem_alloc_unit);
  if (requested > arch.shared_mem_per_block_default) {
    r.notes.push_back("more than " + Bytes(arch.shared_mem_per_block_default) +
                      " of shared memory per block needs an opt-in: "
                      "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, " +
                      std::to_string(in.dynamic_smem_bytes) + ")");
  }

  r.block_limit_registers = BlockLimitRegisters(arch, in.registers_per_thread, r.warps_per_block);
  r.block_limit_warps = arch.max_warps_per_sm / r.warps_per_block;
  r.block_limit_sm = arch.max_blocks_per_sm;
  const int64_t max_config = arch.shared_mem_configs.back();
  r.block_limit_shared_mem_max_carveout = BlockLimitSmem(max_config, r.smem_per_block);

  // The shared-memory limit that decides occupancy: against the carveout given, or (when none is
  // given) against the largest one, since the driver picks a carveout that does not lower
  // occupancy below what the other limits allow.
  int smem_limit_for_occupancy = r.block_limit_shared_mem_max_carveout;
  if (in.smem_config_bytes >= 0) {
    int64_t config = AlignUpToSmemConfig(arch, in.smem_config_bytes);
    if (config < 0) {
      std::string list;
      for (int64_t c : arch.shared_mem_configs) list += (list.empty() ? "" : ", ") + Bytes(c);
      return InvalidArgumentError("shared memory configuration of " + Bytes(in.smem_config_bytes) +
                                  " is over the largest carveout of " + arch.name + "; it offers " +
                                  list);
    }
    r.smem_config_source = SmemConfigSource::kGiven;
    if (config < r.smem_per_block) {
      config = AlignUpToSmemConfig(arch, r.smem_per_block);
      r.smem_config_source = SmemConfigSource::kRaised;
      r.notes.push_back("the carveout given holds no block of " + Bytes(r.smem_per_block) +
                        "; the driver raises it to " + Bytes(config));
    }
    r.smem_config_bytes = config;
    r.block_limit_shared_mem = BlockLimitSmem(config, r.smem_per_block);
    smem_limit_for_occupancy = r.block_limit_shared_mem;
  } else {
    r.smem_config_bytes = DriverSmemConfig(arch, r, requested);
    r.block_limit_shared_mem = BlockLimitSmem(r.smem_config_bytes, r.smem_per_block);
  }

  r.active_blocks_per_sm = std::min(
      {r.block_limit_registers, smem_limit_for_occupancy, r.block_limit_warps, r.block_limit_sm});
  r.active_warps_per_sm = r.active_blocks_per_sm * r.warps_per_block;
  r.theoretical_occupancy_pct = 100.0 * r.active_warps_per_sm / arch.max_warps_per_sm;
  if (r.block_limit_registers == r.active_blocks_per_sm) r.limiters |= kLimitRegisters;
  if (smem_limit_for_occupancy == r.active_blocks_per_sm) r.limiters |= kLimitSharedMemory;
  if (r.block_limit_warps == r.active_blocks_per_sm) r.limiters |= kLimitWarps;
  if (r.block_limit_sm == r.active_blocks_per_sm) r.limiters |= kLimitBlocksPerSm;
  return r;
}

}  // namespace sightline
