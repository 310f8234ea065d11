// Advice on top of the calculator: every suggestion is computed by running the calculator on the
// changed configuration, so the occupancy it promises is the one the rules give.
#include "kernel/occupancy_advice.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace sightline {
namespace {

std::optional<OccupancyResult> Try(const GpuArch& arch, const OccupancyInput& in) {
  StatusOr<OccupancyResult> r = ComputeOccupancy(arch, in);
  if (!r.ok()) return std::nullopt;
  return *r;
}

std::string KiB(int64_t bytes) {
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " B";
}

void AddRegisterChanges(const GpuArch& arch, const OccupancyInput& in,
                        const OccupancyResult& current, std::vector<OccupancyChange>& out) {
  // Walk the register count down; keep the first step that adds a block and the best one.
  std::vector<std::pair<int, OccupancyResult>> steps;
  int best_blocks = current.active_blocks_per_sm;
  for (int r = in.registers_per_thread - 1; r >= 16; --r) {
    OccupancyInput m = in;
    m.registers_per_thread = r;
    std::optional<OccupancyResult> o = Try(arch, m);
    if (o && o->active_blocks_per_sm > best_blocks) {
      best_blocks = o->active_blocks_per_sm;
      steps.emplace_back(r, *o);
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i != 0 && i + 1 != steps.size()) continue;
    const auto& [r, o] = steps[i];
    out.push_back({"registers per thread <= " + std::to_string(r),
                   "__launch_bounds__(" + std::to_string(in.block_size) + ", " +
                       std::to_string(o.active_blocks_per_sm) +
                       ") or -maxrregcount=" + std::to_string(r) + " (watch for spills)",
                   o.active_blocks_per_sm, o.theoretical_occupancy_pct});
  }
}

void AddSharedMemoryChanges(const GpuArch& arch, const OccupancyInput& in,
                            const OccupancyResult& current, std::vector<OccupancyChange>& out) {
  if (in.smem_config_bytes >= 0 && current.smem_config_bytes < arch.shared_mem_configs.back()) {
    OccupancyInput m = in;
    m.smem_config_bytes = -1;
    std::optional<OccupancyResult> o = Try(arch, m);
    if (o && o->active_blocks_per_sm > current.active_blocks_per_sm) {
      out.push_back({"a larger shared-memory carveout",
                     "cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, "
                     "100), or no carveout preference",
                     o->active_blocks_per_sm, o->theoretical_occupancy_pct});
    }
  }
  const int others =
      std::min({current.block_limit_registers, current.block_limit_warps, current.block_limit_sm});
  const int64_t max_config = arch.shared_mem_configs.back();
  int last_blocks = current.active_blocks_per_sm;
  for (int b : {current.active_blocks_per_sm + 1, others}) {
    if (b <= last_blocks || b > others) continue;
    // The most a block may request so that b blocks fit the largest carveout.
    const int64_t per_block =
        max_config / b / arch.shared_mem_alloc_unit * arch.shared_mem_alloc_unit;
    const int64_t total = per_block - arch.reserved_shared_mem_per_block;
    const int64_t dynamic = total - in.static_smem_bytes;
    if (dynamic < 0 || total >= in.static_smem_bytes + in.dynamic_smem_bytes) continue;
    OccupancyInput m = in;
    m.dynamic_smem_bytes = dynamic;
    m.smem_config_bytes = -1;
    std::optional<OccupancyResult> o = Try(arch, m);
    if (!o || o->active_blocks_per_sm <= last_blocks) continue;
    last_blocks = o->active_blocks_per_sm;
    out.push_back(
        {"shared memory per block <= " + KiB(total) + " (dynamic <= " + KiB(dynamic) + ")",
         "smaller tiles, or fewer pipeline stages in shared memory", o->active_blocks_per_sm,
         o->theoretical_occupancy_pct});
  }
}

// When registers and shared memory both bind, neither change alone adds a block.
void AddCombinedChange(const GpuArch& arch, const OccupancyInput& in,
                       const OccupancyResult& current, std::vector<OccupancyChange>& out) {
  const int b = current.active_blocks_per_sm + 1;
  if (b > std::min(current.block_limit_warps, current.block_limit_sm)) return;
  int regs = -1;
  for (int r = in.registers_per_thread - 1; r >= 16 && regs < 0; --r) {
    OccupancyInput m = in;
    m.registers_per_thread = r;
    std::optional<OccupancyResult> o = Try(arch, m);
    if (o && o->block_limit_registers >= b) regs = r;
  }
  const int64_t per_block =
      arch.shared_mem_configs.back() / b / arch.shared_mem_alloc_unit * arch.shared_mem_alloc_unit;
  const int64_t total = per_block - arch.reserved_shared_mem_per_block;
  const int64_t dynamic = total - in.static_smem_bytes;
  if (regs < 0 || dynamic < 0) return;
  OccupancyInput m = in;
  m.registers_per_thread = regs;
  m.dynamic_smem_bytes = std::min(dynamic, in.dynamic_smem_bytes);
  m.smem_config_bytes = -1;
  std::optional<OccupancyResult> o = Try(arch, m);
  if (!o || o->active_blocks_per_sm < b) return;
  out.push_back({"registers per thread <= " + std::to_string(regs) +
                     " and shared memory per block <= " + KiB(total),
                 "__launch_bounds__(" + std::to_string(in.block_size) + ", " + std::to_string(b) +
                     ") and smaller tiles",
                 o->active_blocks_per_sm, o->theoretical_occupancy_pct});
}

void AddBlockSizeChanges(const GpuArch& arch, const OccupancyInput& in,
                         const OccupancyResult& current, std::vector<OccupancyChange>& out) {
  std::vector<OccupancyChange> candidates;
  for (int bs : {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024}) {
    if (bs == in.block_size || bs > arch.max_threads_per_block) continue;
    OccupancyInput m = in;
    m.block_size = bs;
    std::optional<OccupancyResult> o = Try(arch, m);
    if (!o || o->theoretical_occupancy_pct <= current.theoretical_occupancy_pct) continue;
    candidates.push_back({"block size " + std::to_string(bs),
                          "same registers and shared memory per block; rescale the grid",
                          o->active_blocks_per_sm, o->theoretical_occupancy_pct});
  }
  // The best occupancy first; among equals, the size nearest the current one.
  auto distance = [&](const OccupancyChange& c) {
    const int bs = std::stoi(c.what.substr(c.what.rfind(' ') + 1));
    return std::abs(std::log2(static_cast<double>(bs) / in.block_size));
  };
  std::stable_sort(candidates.begin(), candidates.end(), [&](const auto& a, const auto& b) {
    if (a.occupancy_pct != b.occupancy_pct) return a.occupancy_pct > b.occupancy_pct;
    return distance(a) < distance(b);
  });
  if (candidates.size() > 3) candidates.resize(3);
  out.insert(out.end(), candidates.begin(), candidates.end());
}

}  // namespace

WaveInfo ComputeWaves(const OccupancyResult& occupancy, int sm_count, int64_t grid_blocks) {
  WaveInfo w;
  w.grid_blocks = grid_blocks;
  w.sm_count = sm_count;
  w.blocks_per_wave = static_cast<int64_t>(occupancy.active_blocks_per_sm) * sm_count;
  if (w.blocks_per_wave <= 0 || grid_blocks <= 0) return w;
  w.waves_per_sm = static_cast<double>(grid_blocks) / static_cast<double>(w.blocks_per_wave);
  w.full_waves = grid_blocks / w.blocks_per_wave;
  w.tail_blocks = grid_blocks % w.blocks_per_wave;
  w.tail_fill_pct = 100.0 * static_cast<double>(w.tail_blocks) / w.blocks_per_wave;
  if (w.tail_blocks > 0) {
    const double waves = static_cast<double>(w.full_waves + 1);
    w.tail_idle_pct = (100.0 - w.tail_fill_pct) / waves;
  }
  return w;
}

std::vector<OccupancyChange> SuggestOccupancyChanges(const GpuArch& arch, const OccupancyInput& in,
                                                     const OccupancyResult& current) {
  std::vector<OccupancyChange> out;
  if (current.theoretical_occupancy_pct >= 100.0) return out;
  if (current.limiters & kLimitRegisters) AddRegisterChanges(arch, in, current, out);
  if (current.limiters & kLimitSharedMemory) AddSharedMemoryChanges(arch, in, current, out);
  if ((current.limiters & kLimitRegisters) && (current.limiters & kLimitSharedMemory)) {
    AddCombinedChange(arch, in, current, out);
  }
  AddBlockSizeChanges(arch, in, current, out);
  return out;
}

std::vector<OccupancySweepRow> SweepOccupancy(const GpuArch& arch, const OccupancyInput& in,
                                     SweepKind kind) {
  std::vector<int> values;
  if (kind == SweepKind::kBlockSize) {
    for (int bs = 32; bs <= arch.max_threads_per_block; bs += 32) values.push_back(bs);
    values.push_back(in.block_size);
  } else {
    for (int r = 16; r < arch.max_registers_per_thread; r += 8) values.push_back(r);
    values.push_back(arch.max_registers_per_thread);
    values.push_back(in.registers_per_thread);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<OccupancySweepRow> rows;
  for (int v : values) {
    OccupancyInput m = in;
    (kind == SweepKind::kBlockSize ? m.block_size : m.registers_per_thread) = v;
    OccupancySweepRow row;
    row.value = v;
    StatusOr<OccupancyResult> r = ComputeOccupancy(arch, m);
    row.valid = r.ok();
    if (r.ok()) {
      row.result = *r;
    } else {
      row.error = r.status().message();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace sightline
