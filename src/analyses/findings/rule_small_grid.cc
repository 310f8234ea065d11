// Rule small_grid: long kernels whose grid cannot fill the GPU — fewer blocks than the SMs can
// hold at once (SMs x resident blocks per SM, from the occupancy calculator and the launch
// configuration in the trace). docs/analyses/findings.md, "small_grid".
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analyses/findings/findings.h"
#include "facts/kernel_category.h"
#include "kernel/gpu_arch.h"
#include "kernel/occupancy.h"

namespace sightline {
namespace {

constexpr DurationNs kMinMeanNs = 10'000;    // shorter kernels: launch-bound, not grid-bound
constexpr double kSmallGridMinShare = 0.01;  // of all kernel time
constexpr double kSplitEfficiency = 0.5;     // share of the idle-SM time a wider grid recovers
constexpr double kLowWaveFill = 0.25;        // at most this share of the resident-block slots used
constexpr size_t kSmallGridMaxFindings = 5;
constexpr size_t kSmallGridSpans = 16;

struct Config {
  int32_t device;
  StringId name;
  Dim3 grid, block;
  int32_t regs, smem;
  friend bool operator==(const Config&, const Config&) = default;
};
struct ConfigHash {
  size_t operator()(const Config& c) const {
    uint64_t h = std::hash<StringId>()(c.name);
    for (int64_t v : {int64_t{c.device}, int64_t{c.grid.x}, int64_t{c.grid.y}, int64_t{c.grid.z},
                      int64_t{c.block.x}, int64_t{c.block.y}, int64_t{c.block.z}, int64_t{c.regs},
                      int64_t{c.smem}}) {
      h = (h ^ static_cast<uint64_t>(v)) * 0x100000001b3ull;
    }
    return h;
  }
};
struct GridGroup {
  int64_t count = 0;
  DurationNs total_ns = 0;
  int64_t first_row = -1;
  int32_t static_smem = 0, dynamic_smem = 0;
  std::vector<FindingSpan> first;  // the first kSmallGridSpans launches (timeline annotations)
};

}  // namespace

Status RuleSmallGrid(AnalysisContext& c, std::vector<Finding>& out) {
  const Trace& trace = c.trace();
  const auto& k = trace.kernels;
  std::unordered_map<Config, GridGroup, ConfigHash> groups;
  // Collectives use few blocks (channels) by design; exposed_comm covers them.
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.grid[i].Count() <= 0 || k.block[i].Count() <= 0) continue;
    if (c.kernels().IsCommunication(k.name[i])) continue;
    const int32_t ss = std::max(0, k.static_smem_bytes[i]);
    const int32_t ds = std::max(0, k.dynamic_smem_bytes[i]);
    if (int64_t{ss} + ds > INT32_MAX) continue;  // no GPU has 2 GiB of shared memory: damaged
    GridGroup& g = groups[Config{k.device[i], k.short_name[i], k.grid[i], k.block[i],
                                 k.registers_per_thread[i], ss + ds}];
    if (g.count++ == 0) {
      g.first_row = static_cast<int64_t>(i);
      g.static_smem = ss;
      g.dynamic_smem = ds;
    }
    g.total_ns += k.dur_ns(i);
    if (g.first.size() < kSmallGridSpans)
      g.first.push_back({k.start_ns[i], k.end_ns[i], k.device[i]});
  }

  std::vector<Finding> found;
  for (const auto& [cfg, g] : groups) {
    if (g.total_ns < kMinMeanNs * g.count) continue;
    if (g.total_ns < kSmallGridMinShare * c.gpu().TotalKernelTimeNs()) continue;
    const DeviceInfo* dev = trace.FindDevice(cfg.device);
    if (dev == nullptr || dev->cc_major <= 0) continue;
    StatusOr<ResolvedGpu> gpu = ResolveGpu(fmt::format("{}.{}", dev->cc_major, dev->cc_minor));
    if (!gpu.ok()) continue;
    const int sms = dev->sm_count > 0 ? dev->sm_count : gpu->sm_count;
    if (sms <= 0) continue;
    OccupancyInput in;
    in.block_size = static_cast<int>(cfg.block.Count());
    in.registers_per_thread = std::max(0, cfg.regs);
    in.static_smem_bytes = g.static_smem;
    in.dynamic_smem_bytes = g.dynamic_smem;
    StatusOr<OccupancyResult> occ = ComputeOccupancy(gpu->arch, in);
    if (!occ.ok() || occ->active_blocks_per_sm <= 0) continue;
    const int64_t blocks = cfg.grid.Count();
    const int64_t capacity = int64_t{sms} * occ->active_blocks_per_sm;
    if (blocks >= capacity) continue;

    const double sm_fill = std::min(1.0, static_cast<double>(blocks) / sms);
    const double wave_fill = static_cast<double>(blocks) / capacity;
    // Fewer blocks than SMs: idle SMs, and a wider grid recovers part of their time. Every SM
    // busy but far fewer resident blocks than fit (one block per SM where eight fit, the
    // talk's scale_1x128 case): each scheduler has few warps to hide memory latency with, and
    // a kernel that waits on memory speeds up with more warps in flight; the estimate takes the
    // same fraction of the unused resident-block slots' share.
    const double idle = blocks < sms                ? 1.0 - sm_fill
                        : wave_fill <= kLowWaveFill ? 1.0 - wave_fill
                                                    : 0.0;
    const DurationNs saving = static_cast<DurationNs>(g.total_ns * idle * kSplitEfficiency);
    Finding f;
    f.id = "small_grid";
    f.severity = blocks < sms || wave_fill <= kLowWaveFill ? Severity::kMedium : Severity::kLow;
    const std::string_view name = trace.str(cfg.name);
    f.title = fmt::format(
        "Small grid: {} runs {} blocks where {} SMs x {} resident blocks = {} fit at once{}", name,
        blocks, sms, occ->active_blocks_per_sm, capacity,
        blocks < sms ? fmt::format(" ({} SMs idle)", sms - blocks) : std::string());
    f.evidence.push_back({"kernel", "Kernel", std::string(name)});
    f.evidence.push_back({"launches", "Launches", g.count, Unit::kCount});
    f.evidence.push_back({"total_ns", "Total time", g.total_ns, Unit::kDurationNs});
    f.evidence.push_back({"mean_ns", "Mean duration", g.total_ns / g.count, Unit::kDurationNs});
    f.evidence.push_back(
        {"grid", "Grid", fmt::format("{}x{}x{}", cfg.grid.x, cfg.grid.y, cfg.grid.z)});
    f.evidence.push_back(
        {"block", "Block", fmt::format("{}x{}x{}", cfg.block.x, cfg.block.y, cfg.block.z)});
    f.evidence.push_back({"blocks", "Blocks", blocks, Unit::kCount});
    f.evidence.push_back({"sms", "SMs", int64_t{sms}, Unit::kCount});
    f.evidence.push_back({"blocks_per_sm", "Resident blocks per SM",
                          int64_t{occ->active_blocks_per_sm}, Unit::kCount});
    f.evidence.push_back({"limiter", "Blocks per SM limited by", LimiterNames(occ->limiters)});
    f.evidence.push_back(
        {"wave_fill_pct", "Share of one full wave", 100.0 * blocks / capacity, Unit::kPercent});
    f.where = fmt::format("device {} ({}), stream {}, first at {}", cfg.device, dev->name,
                          k.stream[g.first_row],
                          FormatDuration(k.start_ns[g.first_row] - trace.begin_ns()));
    f.recommendation =
        blocks < sms
            ? "Raise the grid to at least the SM count (ideally SMs x blocks per SM): split the "
              "work further (split-K / stream-K for GEMMs, more blocks per row or sequence "
              "split for reductions and attention decode), or pick a kernel/tile config made "
              "for this small problem size."
            : fmt::format(
                  "All SMs get a block but fewer than they could hold: launch {} blocks or more "
                  "(SMs x resident blocks per SM; a grid-stride loop keeps the work per thread "
                  "right) so that more warps are resident to hide memory latency, or use "
                  "smaller blocks or tiles, or fuse the kernel with neighbours that run "
                  "concurrently.",
                  capacity);
    f.estimated_savings_ns = saving;
    for (const FindingSpan& span : g.first) f.AddSpan(span.start_ns, span.end_ns, span.device);
    f.SortSpans();
    found.push_back(std::move(f));
  }
  std::sort(found.begin(), found.end(), [](const Finding& a, const Finding& b) {
    if (a.estimated_savings_ns != b.estimated_savings_ns) {
      return a.estimated_savings_ns > b.estimated_savings_ns;
    }
    return a.title < b.title;  // deterministic order whatever the hash map's
  });
  if (found.size() > kSmallGridMaxFindings) found.resize(kSmallGridMaxFindings);
  for (Finding& f : found) out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
