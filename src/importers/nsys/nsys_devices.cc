// GPUs of an nsys export.
//
// TARGET_INFO_GPU: id (the deviceId that kernel and memory rows use, as nsys's own reports join
// them) -> id; name; smCount -> sm_count; computeMajor/Minor -> cc_major/minor; totalMemory;
// maxWarpsPerSm * threadsPerWarp -> max_threads_per_sm; maxBlocksPerSm; maxRegistersPerSm;
// maxShmemPerSm; maxShmemPerBlockOptin; l2CacheSize; clockRate (Hz); memoryBandwidth (B/s).
// Older exports name the table TARGET_INFO_CUDA_GPU with CUPTI's device-record column names
// (numMultiprocessors, computeCapabilityMajor, coreClockRate in kHz, globalMemoryBandwidth in kB/s,
// ...); those are read as alternatives and converted to Hz and B/s.
#include "importers/nsys/nsys_tables.h"

namespace sightline {
namespace {

enum Col {
  kId,
  kName,
  kSmCount,
  kCcMajor,
  kCcMinor,
  kTotalMemory,
  kThreadsPerWarp,
  kMaxWarpsPerSm,
  kMaxBlocksPerSm,
  kRegistersPerSm,
  kSmemPerSm,
  kSmemPerBlockOptin,
  kL2Cache,
  kClockRate,
  kBandwidth,
};

constexpr NsysColumn kDeviceColumns[] = {
    {"id|deviceId|cuDevice", true},
    {"name"},
    {"smCount|numMultiprocessors"},
    {"computeMajor|computeCapabilityMajor"},
    {"computeMinor|computeCapabilityMinor"},
    {"totalMemory|globalMemorySize"},
    {"threadsPerWarp|numThreadsPerWarp"},
    {"maxWarpsPerSm|maxWarpsPerMultiprocessor"},
    {"maxBlocksPerSm|maxBlocksPerMultiprocessor"},
    {"maxRegistersPerSm|maxRegistersPerMultiprocessor"},
    {"maxShmemPerSm|maxSharedMemoryPerMultiprocessor"},
    {"maxShmemPerBlockOptin|maxSharedMemoryPerBlockOptin"},
    {"l2CacheSize"},
    {"clockRate|coreClockRate"},
    {"memoryBandwidth|globalMemoryBandwidth"},
};

// CUPTI's device record gives the clock in kHz and the bandwidth in kB/s. A clock below 10 MHz or
// a bandwidth below 10 GB/s cannot be in Hz or B/s for a CUDA GPU, so only those are scaled.
int64_t ScaleCuptiUnit(int64_t value, bool cupti_column, int64_t below) {
  return cupti_column && value > 0 && value < below ? value * 1000 : value;
}

}  // namespace

Status ReadNsysDevices(NsysContext& ctx) {
  const char* table = ctx.db.HasTable(kNsysGpuTable)      ? kNsysGpuTable
                      : ctx.db.HasTable(kNsysOldGpuTable) ? kNsysOldGpuTable
                                                          : nullptr;
  if (table == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(NsysSelect select, BuildNsysSelect(ctx.db, table, kDeviceColumns));
  ASSIGN_OR_RETURN(SqliteStatement stmt, ctx.db.Prepare(select.sql));
  const bool cupti_clock = select.chosen[kClockRate] == "coreClockRate";
  const bool cupti_bandwidth = select.chosen[kBandwidth] == "globalMemoryBandwidth";
  while (stmt.Step()) {
    // Every value kept in 32 bits must fit, the threads per SM (warps x warp size) included.
    const int64_t warp = stmt.IsNull(kThreadsPerWarp) ? 32 : stmt.Int64(kThreadsPerWarp);
    bool fits = true;
    for (int c : {kId, kSmCount, kCcMajor, kCcMinor, kMaxBlocksPerSm, kRegistersPerSm,
                  kMaxWarpsPerSm, kThreadsPerWarp}) {
      fits = fits && stmt.FitsInt32(c);
    }
    if (!fits || stmt.Int64(kMaxWarpsPerSm) * warp > INT32_MAX ||
        stmt.Int64(kMaxWarpsPerSm) * warp < INT32_MIN) {
      ++ctx.counts.out_of_range_rows[table];
      continue;
    }
    DeviceInfo d;
    d.id = stmt.Int32(kId);
    d.name = std::string(stmt.Text(kName));
    d.sm_count = stmt.Int32(kSmCount);
    d.cc_major = stmt.Int32(kCcMajor);
    d.cc_minor = stmt.Int32(kCcMinor);
    d.total_memory_bytes = stmt.Int64(kTotalMemory);
    d.max_threads_per_sm = static_cast<int32_t>(stmt.Int64(kMaxWarpsPerSm) * warp);
    d.max_blocks_per_sm = stmt.Int32(kMaxBlocksPerSm);
    d.registers_per_sm = stmt.Int32(kRegistersPerSm);
    d.shared_memory_per_sm_bytes = stmt.Int64(kSmemPerSm);
    d.shared_memory_per_block_optin_bytes = stmt.Int64(kSmemPerBlockOptin);
    d.l2_cache_bytes = stmt.Int64(kL2Cache);
    d.clock_rate_hz = ScaleCuptiUnit(stmt.Int64(kClockRate), cupti_clock, 10'000'000);
    d.memory_bandwidth_bytes_per_s =
        ScaleCuptiUnit(stmt.Int64(kBandwidth), cupti_bandwidth, 10'000'000'000);
    ctx.builder.AddDevice(d);
  }
  return stmt.status();
}

}  // namespace sightline
