// Per-kernel analysis of an ncu export: the verdict (rules in docs/kernel/ncu.md), ncu rules in
// order, the occupancy calculator against ncu's block limits, Sightline's hints and what the
// export lacks. The numbers come from ncu_metrics.cc.
#include "kernel/ncu_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "kernel/gpu_arch.h"
#include "kernel/ncu_metrics.h"
#include "kernel/ncu_stalls.h"
#include "kernel/occupancy.h"
#include "kernel/occupancy_advice.h"

namespace sightline {
namespace {

// A kernel is throughput-bound when SM or memory throughput reaches this share of peak; below it
// on both, it is latency-bound (Nsight Compute's SOLBottleneck rule uses the same 60%).
constexpr double kBoundThresholdPct = 60.0;

void Classify(NcuKernelAnalysis& a) {
  const double s = a.sm_throughput_pct, m = a.memory_throughput_pct;
  if (std::isnan(s) || std::isnan(m)) return;
  if (std::max(s, m) >= kBoundThresholdPct) {
    a.bound = m >= s ? "memory" : "compute";
    a.bound_reason = fmt::format(
        "{} throughput is {:.0f}% of peak (compute {:.0f}%, memory {:.0f}%; the bound is the unit "
        "at or above {:.0f}%)",
        a.bound == "memory" ? "memory" : "compute (SM)", std::max(s, m), s, m, kBoundThresholdPct);
    return;
  }
  a.bound = "latency";
  std::string why = fmt::format(
      "neither compute ({:.0f}%) nor memory ({:.0f}%) reaches {:.0f}% of peak: the units wait", s,
      m, kBoundThresholdPct);
  if (!std::isnan(a.waves_per_sm) && a.waves_per_sm < 1.0) {
    why += fmt::format("; the grid fills {:.0f}% of one wave", 100.0 * a.waves_per_sm);
  }
  if (!std::isnan(a.achieved_occupancy_pct)) {
    why += fmt::format("; achieved occupancy {:.0f}%", a.achieved_occupancy_pct);
  }
  if (!a.stalls.empty()) {
    const StallReasonInfo* info = FindStallReason(a.stalls[0].reason);
    why += fmt::format("; top stall: {} ({:.0f}%)", info ? info->title : a.stalls[0].reason,
                       a.stalls[0].share_pct);
  }
  a.bound_reason = why;
}

// The calculator on ncu's launch statistics, against ncu's block limits.
void CheckOccupancy(NcuKernelAnalysis& a, OccupancyInput& in, OccupancyResult& out, bool& ok) {
  ok = false;
  if (a.registers < 0 || a.block_threads < 0 || a.static_smem_bytes < 0 ||
      a.dynamic_smem_bytes < 0 || a.limit_registers < 0 || a.limit_warps < 0) {
    return;
  }
  StatusOr<ResolvedGpu> gpu = ResolveGpu(a.cc);
  if (!gpu.ok()) {
    a.occupancy_check.detail = "compute capability '" + a.cc + "' is not in the calculator's table";
    return;
  }
  in.block_size = static_cast<int>(a.block_threads);
  in.registers_per_thread = static_cast<int>(a.registers);
  in.static_smem_bytes = a.static_smem_bytes;
  in.dynamic_smem_bytes = a.dynamic_smem_bytes;
  in.smem_config_bytes = a.smem_config_bytes;
  StatusOr<OccupancyResult> r = ComputeOccupancy(gpu->arch, in);
  a.occupancy_check.checked = true;
  if (!r.ok()) {
    a.occupancy_check.detail = "calculator rejects the launch: " + r.status().message();
    return;
  }
  out = *r;
  ok = true;
  auto same = [](int64_t ncu, int calc) { return ncu < 0 || ncu == calc; };
  const bool limits = same(a.limit_registers, r->block_limit_registers) &&
                      same(a.limit_shared_mem, r->block_limit_shared_mem) &&
                      same(a.limit_warps, r->block_limit_warps) &&
                      same(a.limit_sm, r->block_limit_sm);
  const bool occ = std::isnan(a.theoretical_occupancy_pct) ||
                   std::fabs(a.theoretical_occupancy_pct - r->theoretical_occupancy_pct) < 0.01;
  a.occupancy_check.agrees = limits && occ;
  a.occupancy_check.detail =
      fmt::format("calculator: registers {}, shared mem {}, warps {}, SM {}, theoretical {:.2f}%",
                  r->block_limit_registers, r->block_limit_shared_mem, r->block_limit_warps,
                  r->block_limit_sm, r->theoretical_occupancy_pct);
  if (!a.occupancy_check.agrees && a.smem_sizes_rounded) {
    a.occupancy_check.detail +=
        " (ncu printed shared memory in Kbyte with 2 decimals; export with --print-units base "
        "for exact sizes)";
  }
}

void AddHints(NcuKernelAnalysis& a, const OccupancyInput& in, const OccupancyResult& occ,
              bool have_occ) {
  const int64_t active =
      have_occ ? occ.active_blocks_per_sm
      : a.limit_registers >= 0
          ? std::min({a.limit_registers, a.limit_shared_mem, a.limit_warps, a.limit_sm})
          : -1;
  if (a.grid_blocks > 0 && a.sm_count > 0 && active > 0) {
    const int64_t per_wave = a.sm_count * active;
    if (a.grid_blocks < per_wave) {
      a.hints.push_back(fmt::format(
          "grid too small: {} blocks fill {:.0f}% of the GPU's {} resident-block slots ({} SMs x "
          "{} blocks/SM){}; launch at least {} blocks (more, smaller work items; split-K or "
          "stream-K for GEMMs; a grid-stride loop over {} blocks)",
          a.grid_blocks, 100.0 * a.grid_blocks / per_wave, per_wave, a.sm_count, active,
          a.grid_blocks < a.sm_count
              ? fmt::format(", and {} SMs get no block at all", a.sm_count - a.grid_blocks)
              : "",
          per_wave, per_wave));
    } else {
      const double waves = static_cast<double>(a.grid_blocks) / per_wave;
      const double frac = waves - std::floor(waves);
      if (waves < 8 && frac > 0 && frac <= 0.5) {
        a.hints.push_back(fmt::format(
            "tail effect: {:.2f} waves; the last wave keeps {:.0f}% of the GPU busy; grids of "
            "whole waves ({} blocks each) or a persistent grid of {} blocks avoid it",
            waves, 100.0 * frac, per_wave, per_wave));
      }
    }
  }
  if (have_occ && occ.theoretical_occupancy_pct < 100.0 && a.bound != "compute" &&
      a.bound != "memory") {
    for (const OccupancyChange& c : SuggestOccupancyChanges(ResolveGpu(a.cc)->arch, in, occ)) {
      if (c.what.starts_with("block size")) continue;
      a.hints.push_back(fmt::format(
          "occupancy limited by {} ({:.1f}% theoretical): {} gives {} blocks/SM, {:.1f}% ({})",
          LimiterNames(occ.limiters), occ.theoretical_occupancy_pct, c.what, c.active_blocks_per_sm,
          c.occupancy_pct, c.how));
      break;
    }
  }
  if (!std::isnan(a.achieved_occupancy_pct) && !std::isnan(a.theoretical_occupancy_pct) &&
      (std::isnan(a.waves_per_sm) || a.waves_per_sm >= 1.0) &&
      a.achieved_occupancy_pct < 0.7 * a.theoretical_occupancy_pct) {
    a.hints.push_back(fmt::format(
        "achieved occupancy {:.0f}% is well under the theoretical {:.0f}%: warps wait idle at the "
        "end of blocks or of the grid (load imbalance, a tail) or blocks start slowly",
        a.achieved_occupancy_pct, a.theoretical_occupancy_pct));
  }
  if (!std::isnan(a.local_spill_requests) && a.local_spill_requests > 0) {
    a.hints.push_back(fmt::format(
        "{:.0f} local-memory spill requests: registers spill; allow more registers (fewer "
        "__launch_bounds__ blocks) or keep fewer values live",
        a.local_spill_requests));
  }
  if (a.bound == "memory") {
    a.hints.push_back(fmt::format(
        "memory-bound{}: move fewer bytes (fuse with neighbouring elementwise kernels, keep "
        "tensors in bf16/fp8, reuse tiles through shared memory or L2) and check ncu's memory "
        "rules for uncoalesced or partial accesses",
        std::isnan(a.dram_bandwidth_gbps)
            ? ""
            : fmt::format(" (DRAM {:.0f} GB/s, {:.0f}% of peak)", a.dram_bandwidth_gbps,
                          a.dram_throughput_pct)));
  } else if (a.bound == "compute") {
    a.hints.push_back(
        "compute-bound: gains come from less arithmetic per result or faster units (tensor "
        "cores, lower precision, fused multiply-add); ncu's Compute Workload Analysis shows "
        "which pipe is saturated");
  }
}

void ListMissing(const NcuKernel& k, NcuKernelAnalysis& a) {
  if (std::isnan(a.duration_ns) && std::isnan(a.sm_throughput_pct)) {
    a.missing.push_back("GPU Speed Of Light Throughput (--section SpeedOfLight)");
  }
  if (a.registers < 0) a.missing.push_back("Launch Statistics (--section LaunchStats)");
  if (std::isnan(a.theoretical_occupancy_pct)) {
    a.missing.push_back("Occupancy (--section Occupancy)");
  }
  if (std::isnan(a.dram_bandwidth_gbps)) {
    a.missing.push_back("Memory Workload Analysis (--section MemoryWorkloadAnalysis)");
  }
  if (a.stalls.empty()) {
    const bool has_raw = std::any_of(k.metrics.begin(), k.metrics.end(),
                                     [](const NcuMetric& m) { return m.section.empty(); });
    a.missing.push_back(
        has_raw ? "warp stall reasons (--section WarpStateStats)"
                : "warp stall reasons, which only the raw page has: export it from the same "
                  "report (ncu --import REPORT.ncu-rep --csv --page raw) and pass it with the "
                  "details export");
  }
}

}  // namespace

NcuKernelAnalysis AnalyzeNcuKernel(const NcuKernel& k) {
  NcuKernelAnalysis a;
  a.id = k.id;
  a.name = k.name;
  a.short_name = k.short_name;
  a.block_size = k.block_size;
  a.grid_size = k.grid_size;
  a.cc = k.cc;
  ReadNcuMetrics(k, a);
  ReadNcuStalls(k, a);
  Classify(a);

  a.rules = k.rules;
  auto rank = [](const NcuRule& r) {
    return r.type == "ERR" ? 0 : r.type == "WRN" ? 1 : r.type == "OPT" ? 2 : 3;
  };
  std::stable_sort(a.rules.begin(), a.rules.end(), [&](const NcuRule& x, const NcuRule& y) {
    if (rank(x) != rank(y)) return rank(x) < rank(y);
    const double sx = std::isnan(x.speedup_pct) ? -1 : x.speedup_pct;
    const double sy = std::isnan(y.speedup_pct) ? -1 : y.speedup_pct;
    return sx > sy;
  });

  OccupancyInput in;
  OccupancyResult occ;
  bool have_occ = false;
  CheckOccupancy(a, in, occ, have_occ);
  AddHints(a, in, occ, have_occ);
  ListMissing(k, a);
  return a;
}

std::vector<std::string> MissingNcuSections(const std::vector<NcuKernelAnalysis>& kernels) {
  std::map<std::string, int> count;
  std::vector<std::string> order;
  for (const NcuKernelAnalysis& k : kernels) {
    for (const std::string& m : k.missing) {
      if (count[m]++ == 0) order.push_back(m);
    }
  }
  std::vector<std::string> out;
  for (const std::string& m : order) {
    const int n = count[m];
    out.push_back(n == static_cast<int>(kernels.size())
                      ? m
                      : fmt::format("{} (for {} of {} kernels)", m, n, kernels.size()));
  }
  return out;
}

}  // namespace sightline
