// Per-architecture SM limits (sm_70 .. sm_121) that the occupancy calculator applies, and the names
// users type for them (sm_90, 9.0, h100, ...). Values and sources: docs/kernel/occupancy.md.
// Standard library only, so the GPU validation program can compile it without our dependencies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sightline {

struct GpuArch {
  std::string name;  // "sm_90"
  int cc_major = 0;
  int cc_minor = 0;
  std::string family;    // "Hopper"
  std::string examples;  // "H100, H200, GH200"
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_warps_per_sm = 0;
  int max_blocks_per_sm = 0;
  int registers_per_sm = 65536;
  int max_registers_per_block = 65536;
  int max_registers_per_thread = 255;
  int register_alloc_unit = 256;  // registers are allocated per warp in units of this many
  int sub_partitions = 4;         // SM sub-partitions (SMSPs); registers are split among them
  int64_t shared_mem_per_sm = 0;  // the largest carveout, bytes
  int64_t shared_mem_per_block_default = 48 * 1024;  // without opt-in
  int64_t shared_mem_per_block_optin = 0;   // cudaFuncAttributeMaxDynamicSharedMemorySize max
  int shared_mem_alloc_unit = 0;            // a block's shared memory is rounded up to this
  int reserved_shared_mem_per_block = 0;    // the driver's per-block reservation (sm_80+: 1 KiB)
  std::vector<int64_t> shared_mem_configs;  // carveouts the SM offers, ascending, bytes
  int default_sm_count = 0;                 // SMs of the part named in `sm_count_of`
  std::string sm_count_of;                  // "H100 SXM"

  int max_threads_per_sm() const { return max_warps_per_sm * warp_size; }
};

// Every architecture the table knows, oldest first.
const std::vector<GpuArch>& KnownGpuArchs();

// A GPU or architecture name resolved to its limits, with the SM count of that part.
struct ResolvedGpu {
  GpuArch arch;
  std::string gpu;  // "H100 SXM" when a product name was given, else the representative part
  int sm_count = 0;
};

// Accepts "sm_90", "sm90", "sm_90a", "compute_90", "90", "9.0", and product names ("h100",
// "H200", "a100", "l40s", "b200", "rtx4090", ...), case-insensitive. NotFound lists the known
// names otherwise.
StatusOr<ResolvedGpu> ResolveGpu(std::string_view name);

// The names ResolveGpu accepts besides sm_XX, for help texts: "a100 (sm_80, 108 SMs), ...".
std::string KnownGpuNames();

}  // namespace sightline
