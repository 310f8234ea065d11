// Report sections of `sightline occupancy`: "occupancy" (inputs, allocation, block limits,
// theoretical occupancy), "grid" (with --grid), "occupancy_advice", "occupancy_sweep".
#include "kernel/occupancy_report.h"

#include <fmt/format.h>

namespace sightline {
namespace {

const char* SmemConfigSourceName(SmemConfigSource s) {
  switch (s) {
    case SmemConfigSource::kDriver:
      return "driver's choice (estimate; pass ncu's value with --smem-config)";
    case SmemConfigSource::kGiven:
      return "given";
    case SmemConfigSource::kRaised:
      return "given, raised to hold one block";
  }
  return "";
}

void AddOccupancySection(Report& report, const ResolvedGpu& gpu, const OccupancyInput& in,
                         const OccupancyResult& r) {
  const GpuArch& a = gpu.arch;
  Section& s = report.AddSection(
      "occupancy", fmt::format("Occupancy — {} ({}, {})", a.name, a.family, gpu.gpu), -1);
  s.AddFact("arch", "Architecture", a.name);
  s.AddFact("gpu", "GPU", gpu.gpu);
  s.AddFact("sm_count", "SMs", int64_t{gpu.sm_count}, Unit::kCount);
  s.AddFact("block_size", "Block size (threads)", int64_t{in.block_size}, Unit::kCount);
  s.AddFact("registers_per_thread", "Registers per thread", int64_t{in.registers_per_thread},
            Unit::kCount);
  s.AddFact("static_smem_bytes", "Static shared memory per block", in.static_smem_bytes,
            Unit::kBytes);
  s.AddFact("dynamic_smem_bytes", "Dynamic shared memory per block", in.dynamic_smem_bytes,
            Unit::kBytes);
  s.AddFact("driver_smem_bytes", "Driver shared memory per block", r.driver_smem_per_block,
            Unit::kBytes);
  s.AddFact("smem_per_block_bytes", "Shared memory allocated per block", r.smem_per_block,
            Unit::kBytes);
  s.AddFact("smem_config_bytes", "Shared memory configuration size", r.smem_config_bytes,
            Unit::kBytes);
  s.AddFact("smem_config_source", "  (carveout)", SmemConfigSourceName(r.smem_config_source));
  s.AddFact("warps_per_block", "Warps per block", int64_t{r.warps_per_block}, Unit::kCount);
  s.AddFact("registers_per_block", "Registers allocated per block", int64_t{r.registers_per_block},
            Unit::kCount);
  s.AddFact("block_limit_registers", "Block limit registers",
            BlockLimitValue(r.block_limit_registers), Unit::kCount);
  s.AddFact("block_limit_shared_mem", "Block limit shared mem",
            BlockLimitValue(r.block_limit_shared_mem), Unit::kCount);
  s.AddFact("block_limit_shared_mem_max_carveout", "  (at the largest carveout)",
            BlockLimitValue(r.block_limit_shared_mem_max_carveout), Unit::kCount);
  s.AddFact("block_limit_warps", "Block limit warps", BlockLimitValue(r.block_limit_warps),
            Unit::kCount);
  s.AddFact("block_limit_sm", "Block limit SM", BlockLimitValue(r.block_limit_sm), Unit::kCount);
  s.AddFact("limiting_factor", "Limited by", LimiterNames(r.limiters));
  s.AddFact("active_blocks_per_sm", "Resident blocks per SM", int64_t{r.active_blocks_per_sm},
            Unit::kCount);
  s.AddFact("theoretical_active_warps_per_sm", "Theoretical active warps per SM",
            int64_t{r.active_warps_per_sm}, Unit::kCount);
  s.AddFact("max_warps_per_sm", "Max warps per SM", int64_t{r.max_warps_per_sm}, Unit::kCount);
  s.AddFact("theoretical_occupancy_pct", "Theoretical occupancy", r.theoretical_occupancy_pct,
            Unit::kPercent);
  s.AddFact("full_gpu_grid_blocks", "Grid that fills the GPU once (SMs x blocks/SM)",
            int64_t{gpu.sm_count} * r.active_blocks_per_sm, Unit::kCount);
  for (const std::string& n : r.notes) s.notes.push_back(n);
  if (gpu.gpu.find("unverified") != std::string::npos || gpu.arch.name == "sm_110") {
    s.notes.push_back("the SM count of this part is not verified; pass --sms");
  }
}

void AddGridSection(Report& report, const ResolvedGpu& gpu, const OccupancyResult& r,
                    int64_t grid) {
  const WaveInfo w = ComputeWaves(r, gpu.sm_count, grid);
  Section& s = report.AddSection("grid", "Grid and waves", -1);
  s.AddFact("grid_blocks", "Grid (blocks)", grid, Unit::kCount);
  s.AddFact("blocks_per_wave", "Blocks per wave (SMs x blocks/SM)", w.blocks_per_wave,
            Unit::kCount);
  s.AddFact("waves_per_sm", "Waves per SM", w.waves_per_sm, Unit::kNumber);
  s.AddFact("full_waves", "Full waves", w.full_waves, Unit::kCount);
  s.AddFact("tail_blocks", "Blocks in the last, partial wave", w.tail_blocks, Unit::kCount);
  s.AddFact("tail_fill_pct", "Last wave filled", w.tail_fill_pct, Unit::kPercent);
  s.AddFact("tail_idle_pct", "Time the GPU is partly idle (tail)", w.tail_idle_pct, Unit::kPercent);
  if (grid < w.blocks_per_wave) {
    s.notes.push_back(fmt::format(
        "the grid fills {:.0f}% of the GPU's {} resident-block slots ({} SMs x {} blocks/SM): "
        "launch at least {} blocks (a grid-stride loop over {} blocks keeps every SM busy), or "
        "split the work finer",
        100.0 * grid / w.blocks_per_wave, w.blocks_per_wave, gpu.sm_count, r.active_blocks_per_sm,
        w.blocks_per_wave, w.blocks_per_wave));
  } else if (w.tail_blocks > 0 && w.tail_idle_pct >= 5.0) {
    s.notes.push_back(fmt::format(
        "tail effect: the last wave runs {} of {} blocks, so for about {:.0f}% of the kernel's "
        "time part of the GPU idles; a grid of {} or {} blocks (whole waves), or a persistent "
        "grid of {} blocks looping over the work, avoids it",
        w.tail_blocks, w.blocks_per_wave, w.tail_idle_pct, w.full_waves * w.blocks_per_wave,
        (w.full_waves + 1) * w.blocks_per_wave, w.blocks_per_wave));
  }
}

void AddAdviceSection(Report& report, const ResolvedGpu& gpu, const OccupancyInput& in,
                      const OccupancyResult& r) {
  const std::vector<OccupancyChange> changes = SuggestOccupancyChanges(gpu.arch, in, r);
  Section& s = report.AddSection("occupancy_advice", "What raises occupancy", -1);
  if (changes.empty()) {
    s.notes.push_back(r.theoretical_occupancy_pct >= 100.0
                          ? "occupancy is already at the hardware maximum"
                          : "no single change of registers, shared memory or block size raises "
                            "occupancy");
    return;
  }
  Table& t = s.AddTable("changes", "",
                        {{"change", "Change", Unit::kText},
                         {"how", "How", Unit::kText, true},
                         {"active_blocks_per_sm", "Blocks/SM", Unit::kCount},
                         {"theoretical_occupancy_pct", "Occupancy", Unit::kPercent}});
  for (const OccupancyChange& c : changes) {
    t.rows.push_back({c.what, c.how, int64_t{c.active_blocks_per_sm}, c.occupancy_pct});
  }
  t.note = fmt::format(
      "now: {} blocks/SM, {:.1f}%; higher occupancy helps latency-bound kernels "
      "and is not a goal by itself",
      r.active_blocks_per_sm, r.theoretical_occupancy_pct);
}

void AddSweepSection(Report& report, const ResolvedGpu& gpu, const OccupancyInput& in,
                     SweepKind kind) {
  const bool by_block = kind == SweepKind::kBlockSize;
  Section& s = report.AddSection("occupancy_sweep",
                                 by_block ? "Sweep over block size" : "Sweep over registers", -1);
  Table& t = s.AddTable("sweep", "",
                        {{by_block ? "block_size" : "registers_per_thread",
                          by_block ? "Block" : "Registers", Unit::kCount},
                         {"block_limit_registers", "Lim regs", Unit::kCount},
                         {"block_limit_shared_mem", "Lim smem", Unit::kCount},
                         {"block_limit_warps", "Lim warps", Unit::kCount},
                         {"block_limit_sm", "Lim SM", Unit::kCount},
                         {"active_blocks_per_sm", "Blocks/SM", Unit::kCount},
                         {"theoretical_active_warps_per_sm", "Warps/SM", Unit::kCount},
                         {"theoretical_occupancy_pct", "Occupancy", Unit::kPercent},
                         {"limiting_factor", "Limited by", Unit::kText}});
  for (const OccupancySweepRow& row : SweepOccupancy(gpu.arch, in, kind)) {
    const OccupancyResult& r = row.result;
    if (!row.valid) {
      t.rows.push_back({int64_t{row.value},
                        {},
                        {},
                        {},
                        {},
                        int64_t{0},
                        int64_t{0},
                        0.0,
                        std::string("cannot launch")});
      continue;
    }
    t.rows.push_back({int64_t{row.value}, BlockLimitValue(r.block_limit_registers),
                      BlockLimitValue(r.block_limit_shared_mem_max_carveout),
                      BlockLimitValue(r.block_limit_warps), BlockLimitValue(r.block_limit_sm),
                      int64_t{r.active_blocks_per_sm}, int64_t{r.active_warps_per_sm},
                      r.theoretical_occupancy_pct, LimiterNames(r.limiters)});
  }
  t.note = by_block ? "registers and shared memory per block as given; shared-memory limit at "
                      "the largest carveout"
                    : "block size and shared memory as given; shared-memory limit at the "
                      "largest carveout";
}

}  // namespace

Value BlockLimitValue(int limit) {
  if (limit == kUnlimitedBlocks) return std::monostate{};
  return int64_t{limit};
}

Report BuildOccupancyReport(const ResolvedGpu& gpu, const OccupancyInput& input,
                            const OccupancyResult& result, const OccupancyReportOptions& options) {
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  AddOccupancySection(report, gpu, input, result);
  if (options.grid_blocks > 0) AddGridSection(report, gpu, result, options.grid_blocks);
  AddAdviceSection(report, gpu, input, result);
  if (options.sweep) AddSweepSection(report, gpu, input, *options.sweep);
  return report;
}

}  // namespace sightline
