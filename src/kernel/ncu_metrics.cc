// Where each number of the analysis lives in an ncu export: its details-page label (with the
// section, where a label is used twice) and its raw-page metric name, with unit conversion.
#include "kernel/ncu_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace sightline {
namespace {

enum class Kind { kPlain, kTimeNs, kBytes, kRateGBps };

struct FieldSpec {
  const char* section;  // details section, "" = any
  const char* label;    // details metric name
  const char* raw;      // raw metric name
  Kind kind;
};

constexpr char kSol[] = "GPU Speed Of Light Throughput";
constexpr char kMem[] = "Memory Workload Analysis";

constexpr FieldSpec kDuration{kSol, "Duration", "gpu__time_duration.sum", Kind::kTimeNs};
constexpr FieldSpec kSmThroughput{kSol, "Compute (SM) Throughput",
                                  "sm__throughput.avg.pct_of_peak_sustained_elapsed", Kind::kPlain};
constexpr FieldSpec kMemThroughput{
    kSol, "Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    Kind::kPlain};
constexpr FieldSpec kDramThroughput{kSol, "DRAM Throughput",
                                    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                                    Kind::kPlain};
constexpr FieldSpec kDramBandwidth{kMem, "Memory Throughput", "dram__bytes.sum.per_second",
                                   Kind::kRateGBps};
constexpr FieldSpec kL1Hit{"", "L1/TEX Hit Rate", "l1tex__t_sector_hit_rate.pct", Kind::kPlain};
constexpr FieldSpec kL2Hit{"", "L2 Hit Rate", "lts__t_sector_hit_rate.pct", Kind::kPlain};
constexpr FieldSpec kAchieved{"", "Achieved Occupancy",
                              "sm__warps_active.avg.pct_of_peak_sustained_active", Kind::kPlain};
constexpr FieldSpec kTheoretical{"", "Theoretical Occupancy",
                                 "sm__maximum_warps_per_active_cycle_pct", Kind::kPlain};
constexpr FieldSpec kAchievedWarps{"", "Achieved Active Warps Per SM",
                                   "sm__warps_active.avg.per_cycle_active", Kind::kPlain};
constexpr FieldSpec kTheoreticalWarps{"", "Theoretical Active Warps per SM",
                                      "sm__maximum_warps_avg_per_active_cycle", Kind::kPlain};
constexpr FieldSpec kWaves{"", "Waves Per SM", "launch__waves_per_multiprocessor", Kind::kPlain};
constexpr FieldSpec kSms{"", "# SMs", "launch__sm_count", Kind::kPlain};
constexpr FieldSpec kBlock{"Launch Statistics", "Block Size", "launch__block_size", Kind::kPlain};
constexpr FieldSpec kGrid{"Launch Statistics", "Grid Size", "launch__grid_size", Kind::kPlain};
constexpr FieldSpec kRegisters{"", "Registers Per Thread", "launch__registers_per_thread",
                               Kind::kPlain};
constexpr FieldSpec kStatic{"", "Static Shared Memory Per Block",
                            "launch__shared_mem_per_block_static", Kind::kBytes};
constexpr FieldSpec kDynamic{"", "Dynamic Shared Memory Per Block",
                             "launch__shared_mem_per_block_dynamic", Kind::kBytes};
constexpr FieldSpec kDriver{"", "Driver Shared Memory Per Block",
                            "launch__shared_mem_per_block_driver", Kind::kBytes};
constexpr FieldSpec kConfig{"", "Shared Memory Configuration Size",
                            "launch__shared_mem_config_size", Kind::kBytes};
constexpr FieldSpec kFieldLimitRegs{"", "Block Limit Registers",
                                    "launch__occupancy_limit_registers", Kind::kPlain};
constexpr FieldSpec kFieldLimitSmem{"", "Block Limit Shared Mem",
                                    "launch__occupancy_limit_shared_mem", Kind::kPlain};
constexpr FieldSpec kFieldLimitWarps{"", "Block Limit Warps", "launch__occupancy_limit_warps",
                                     Kind::kPlain};
constexpr FieldSpec kFieldLimitSm{"", "Block Limit SM", "launch__occupancy_limit_blocks",
                                  Kind::kPlain};
constexpr FieldSpec kIssueBusy{"", "Issue Slots Busy",
                               "smsp__issue_active.avg.pct_of_peak_sustained_active", Kind::kPlain};
constexpr FieldSpec kCyclesPerIssue{"", "Warp Cycles Per Issued Instruction",
                                    "smsp__average_warp_latency_per_inst_issued.ratio",
                                    Kind::kPlain};
constexpr FieldSpec kActivePerScheduler{"", "Active Warps Per Scheduler",
                                        "smsp__warps_active.avg.per_cycle_active", Kind::kPlain};
constexpr FieldSpec kEligible{"", "Eligible Warps Per Scheduler",
                              "smsp__warps_eligible.avg.per_cycle_active", Kind::kPlain};
constexpr FieldSpec kSpills{"", "Local Memory Spilling Requests", "", Kind::kPlain};

bool IsPercentUnit(const std::string& unit) { return unit == "%"; }

double Get(const NcuKernel& k, const FieldSpec& f, bool* rounded = nullptr) {
  // The details page's label first (a details export, or details merged with raw), then the raw
  // page's metric name.
  const NcuMetric* m = k.Find(f.label, f.section);
  if (m == nullptr && f.section[0] != '\0') {
    // Another ncu version may name the section differently: match the label, and tell the two
    // "Memory Throughput" rows apart by their unit.
    for (const NcuMetric& x : k.metrics) {
      if (x.name != f.label || x.section.empty()) continue;
      if (f.kind == Kind::kRateGBps && IsPercentUnit(x.unit)) continue;
      if (f.kind == Kind::kPlain && f.label == std::string("Memory Throughput") &&
          !IsPercentUnit(x.unit)) {
        continue;
      }
      m = &x;
      break;
    }
  }
  if (m == nullptr && f.raw[0] != '\0') m = k.Find(f.raw);
  if (m == nullptr) return NAN;
  double v = NcuNumber(m->value);
  if (std::isnan(v)) return v;
  switch (f.kind) {
    case Kind::kPlain:
      return v;
    case Kind::kTimeNs:
      return m->unit.empty() ? v : v * NcuUnitScale(m->unit);
    case Kind::kBytes: {
      const double scale = NcuUnitScale(m->unit);
      if (scale != 1 && rounded != nullptr) *rounded = true;
      return v * scale;
    }
    case Kind::kRateGBps:
      return v * NcuUnitScale(m->unit) / 1e9;
  }
  return v;
}

// Counts and sizes of one kernel are far below 2^53 (where doubles stop being exact); anything
// beyond, negative, infinite or NaN is not a value ncu printed for a real kernel.
constexpr double kMaxPlausible = 9007199254740992.0;  // 2^53

// v rounded, or -1 (unknown) when it is not a plausible count: never an out-of-range conversion.
int64_t ToCount(double v) { return v >= 0 && v <= kMaxPlausible ? std::llround(v) : -1; }

// Sizes ncu printed as "7.70 Kbyte" are known to +-5 bytes; shared memory sizes are multiples of
// 16 bytes in practice, so the nearest multiple of 16 recovers them.
int64_t ToBytes(double v, bool rounded) {
  const int64_t b = ToCount(v);
  if (b < 0) return -1;
  return rounded && b >= 1000 ? (b + 8) / 16 * 16 : b;
}

}  // namespace

void ReadNcuMetrics(const NcuKernel& k, NcuKernelAnalysis& a) {
  a.duration_ns = Get(k, kDuration);
  a.sm_throughput_pct = Get(k, kSmThroughput);
  a.memory_throughput_pct = Get(k, kMemThroughput);
  a.dram_throughput_pct = Get(k, kDramThroughput);
  a.dram_bandwidth_gbps = Get(k, kDramBandwidth);
  a.l1_hit_pct = Get(k, kL1Hit);
  a.l2_hit_pct = Get(k, kL2Hit);
  a.achieved_occupancy_pct = Get(k, kAchieved);
  a.theoretical_occupancy_pct = Get(k, kTheoretical);
  a.achieved_warps_per_sm = Get(k, kAchievedWarps);
  a.theoretical_warps_per_sm = Get(k, kTheoreticalWarps);
  a.waves_per_sm = Get(k, kWaves);
  a.issue_slots_busy_pct = Get(k, kIssueBusy);
  a.warp_cycles_per_issue = Get(k, kCyclesPerIssue);
  a.eligible_warps = Get(k, kEligible);
  // As ncu measures it; only an export without it gets achieved warps per SM / 4 (the four
  // schedulers of an SM since Volta), which differs from the measured value by up to 2%.
  a.active_warps_per_scheduler = Get(k, kActivePerScheduler);
  if (std::isnan(a.active_warps_per_scheduler) && !std::isnan(a.achieved_warps_per_sm)) {
    a.active_warps_per_scheduler = a.achieved_warps_per_sm / 4;
    a.active_warps_per_scheduler_derived = true;
  }
  a.local_spill_requests = Get(k, kSpills);
  a.sm_count = ToCount(Get(k, kSms));
  a.block_threads = ToCount(Get(k, kBlock));
  a.grid_blocks = ToCount(Get(k, kGrid));
  a.registers = ToCount(Get(k, kRegisters));
  bool rounded = false;
  const double st = Get(k, kStatic, &rounded), dyn = Get(k, kDynamic, &rounded);
  a.smem_sizes_rounded = rounded;
  a.static_smem_bytes = ToBytes(st, rounded);
  a.dynamic_smem_bytes = ToBytes(dyn, rounded);
  a.driver_smem_bytes = ToBytes(Get(k, kDriver), true);
  // Carveouts are whole KiB; ncu prints e.g. 233.47 Kbyte for 228 KiB.
  const double config = Get(k, kConfig);
  const int64_t config_kib = ToCount(config / 1024.0);
  a.smem_config_bytes = config_kib < 0 ? -1 : config_kib * 1024;
  a.limit_registers = ToCount(Get(k, kFieldLimitRegs));
  a.limit_shared_mem = ToCount(Get(k, kFieldLimitSmem));
  a.limit_warps = ToCount(Get(k, kFieldLimitWarps));
  a.limit_sm = ToCount(Get(k, kFieldLimitSm));
}

void ReadNcuStalls(const NcuKernel& k, NcuKernelAnalysis& a) {
  constexpr std::string_view kAvg = "smsp__average_warps_issue_stalled_";
  constexpr std::string_view kAvgSuffix = "_per_issue_active.ratio";
  constexpr std::string_view kPc = "smsp__pcsamp_warps_issue_stalled_";
  std::map<std::string, double> avg, pc;
  for (const NcuMetric& m : k.metrics) {
    std::string_view n = m.name;
    const double v = NcuNumber(m.value);
    if (std::isnan(v)) continue;
    if (n.starts_with(kAvg) && n.ends_with(kAvgSuffix)) {
      n.remove_prefix(kAvg.size());
      n.remove_suffix(kAvgSuffix.size());
      avg[std::string(n)] += v;
    } else if (n.starts_with(kPc) && !n.ends_with("_not_issued")) {
      n.remove_prefix(kPc.size());
      pc[std::string(n)] += v;
    }
  }
  a.stalls_are_samples = avg.empty() && !pc.empty();
  const std::map<std::string, double>& src = avg.empty() ? pc : avg;
  double total = 0;
  for (const auto& [reason, v] : src) {
    if (reason != "selected") total += v;
  }
  if (total <= 0) return;
  for (const auto& [reason, v] : src) {
    if (reason == "selected" || v <= 0) continue;
    a.stalls.push_back({reason, v, 100.0 * v / total});
  }
  std::sort(a.stalls.begin(), a.stalls.end(),
            [](const NcuStall& x, const NcuStall& y) { return x.value > y.value; });
}

}  // namespace sightline
