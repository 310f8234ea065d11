// Analysis of one kernel of an Nsight Compute export: the numbers that matter (duration, SM and
// memory throughput, DRAM bandwidth, occupancy and block limits, waves), a verdict (compute-,
// memory- or latency-bound by the rules in docs/kernel/ncu.md), the top warp stall reasons, ncu's
// rule results, Sightline's hints, a check of ncu's block limits against our occupancy calculator,
// and which sections the export lacks (with the ncu flag that collects them). Values are NaN (or
// -1 for counts) when the export does not have them.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "importers/ncu/ncu_csv.h"

namespace sightline {

struct NcuStall {
  std::string reason;  // metric suffix: "long_scoreboard"
  double value = 0;    // cycles per issued instruction, or samples (see NcuKernelAnalysis)
  double share_pct = 0;
};

struct NcuOccupancyCheck {
  bool checked = false;  // false when the launch statistics or occupancy section is missing
  bool agrees = false;
  std::string detail;  // what differs, or the inputs used
};

struct NcuKernelAnalysis {
  int64_t id = -1;
  std::string name, short_name, block_size, grid_size, cc;

  double duration_ns = NAN;
  double sm_throughput_pct = NAN;      // "Compute (SM) Throughput", % of peak
  double memory_throughput_pct = NAN;  // "Memory Throughput" (SOL), % of peak
  double dram_throughput_pct = NAN;
  double dram_bandwidth_gbps = NAN;  // DRAM bytes per second, GB/s (1e9)
  double l1_hit_pct = NAN, l2_hit_pct = NAN;
  double achieved_occupancy_pct = NAN, theoretical_occupancy_pct = NAN;
  double achieved_warps_per_sm = NAN, theoretical_warps_per_sm = NAN;
  double waves_per_sm = NAN;
  double issue_slots_busy_pct = NAN, warp_cycles_per_issue = NAN, eligible_warps = NAN;
  double active_warps_per_scheduler = NAN;  // ncu's, else achieved warps per SM / 4
  bool active_warps_per_scheduler_derived = false;
  double local_spill_requests = NAN;
  int64_t sm_count = -1, block_threads = -1, grid_blocks = -1, registers = -1;
  int64_t static_smem_bytes = -1, dynamic_smem_bytes = -1, driver_smem_bytes = -1;
  int64_t smem_config_bytes = -1;
  int64_t limit_registers = -1, limit_shared_mem = -1, limit_warps = -1, limit_sm = -1;
  bool smem_sizes_rounded = false;  // ncu printed them in Kbyte with two decimals

  std::string bound;         // "compute", "memory", "latency"; "" when SOL is missing
  std::string bound_reason;  // the numbers behind it

  bool stalls_are_samples = false;  // from PC sampling counts instead of per-issue averages
  std::vector<NcuStall> stalls;     // largest first, "selected" excluded

  std::vector<NcuRule> rules;      // ncu's, OPT first, by estimated speedup
  std::vector<std::string> hints;  // Sightline's
  NcuOccupancyCheck occupancy_check;
  std::vector<std::string> missing;  // "Occupancy (collect with --section Occupancy)"
};

NcuKernelAnalysis AnalyzeNcuKernel(const NcuKernel& kernel);

// What the export lacks, each with the ncu flag that collects it, and for how many kernels when
// not for all.
std::vector<std::string> MissingNcuSections(const std::vector<NcuKernelAnalysis>& kernels);

}  // namespace sightline
