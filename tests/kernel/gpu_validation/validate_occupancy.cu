// Validates Sightline's occupancy calculator (src/kernel/occupancy.cc, compiled into this program)
// against the CUDA runtime on the GPU it runs on.
//   validate_occupancy --trials N [--seed S] [--csv FILE]
//       N random configurations (kernel variant with its real register and static shared-memory
//       use, block size, dynamic shared memory, and a carveout preference in some): compares
//       cudaOccupancyMaxActiveBlocksPerMultiprocessor with ComputeOccupancy(...).active_blocks.
//   validate_occupancy --launch M --plan FILE
//       launches M valid configurations once each (run it under ncu) and writes what the
//       calculator predicts for each, in launch order, so compare_ncu_launch.py can match ncu's
//       Launch Statistics / Occupancy sections row by row.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel/gpu_arch.h"
#include "kernel/occupancy.h"
#include "kernel_variants.h"
#include "sightline/gpu_check.h"

using sightline::ComputeOccupancy;
using sightline::OccupancyInput;
using sightline::OccupancyResult;
using sightline::StatusOr;

// A failed CUDA call ends the program: the call, the error and file:line on stderr, exit 1.
#define CUDA_CHECK(...) SIGHTLINE_GPU_CHECK_OR(::sightline::gpu::ExitOnError, __VA_ARGS__)

namespace {

struct Trial {
  int kernel = 0;
  int block = 0;
  size_t dynamic_smem = 0;
  int carveout_pct = -1;     // -1: default (no preference)
  int64_t smem_config = -1;  // the carveout that preference maps to, -1 when none
};

std::vector<KernelVariant> AllKernels() {
  std::vector<KernelVariant> k;
  RegisterKernels_r0(k);
  RegisterKernels_r32(k);
  RegisterKernels_r40(k);
  RegisterKernels_r64(k);
  RegisterKernels_r96(k);
  RegisterKernels_r128(k);
  RegisterKernels_r168(k);
  return k;
}

// The carveout percentage whose preference the runtime rounds up to `config` (as
// cuda_occupancy.h maps a percentage: pct x sharedMemPerMultiprocessor / 100, aligned up).
int PercentFor(const sightline::GpuArch& arch, size_t smem_per_sm, int64_t config) {
  for (int p = 0; p <= 100; ++p) {
    const int64_t bytes = static_cast<int64_t>(static_cast<size_t>(p) * smem_per_sm / 100);
    if (sightline::AlignUpToSmemConfig(arch, bytes) == config) return p;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 0, launches = 0;
  unsigned seed = 1;
  std::string csv_path, plan_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--trials")
      trials = std::atoi(next().c_str());
    else if (a == "--seed")
      seed = static_cast<unsigned>(std::atoi(next().c_str()));
    else if (a == "--csv")
      csv_path = next();
    else if (a == "--launch")
      launches = std::atoi(next().c_str());
    else if (a == "--plan")
      plan_path = next();
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }

  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::string arch_name = "sm_" + std::to_string(prop.major * 10 + prop.minor);
  StatusOr<sightline::ResolvedGpu> gpu = sightline::ResolveGpu(arch_name);
  if (!gpu.ok()) {
    std::fprintf(stderr, "%s\n", gpu.status().message().c_str());
    return 1;
  }
  const sightline::GpuArch& arch = gpu->arch;
  std::printf("device: %s (%s, %d SMs)\n", prop.name, arch_name.c_str(), prop.multiProcessorCount);

  // The table against the device's own properties.
  int table_ok = 0, table_total = 0;
  auto check = [&](const char* what, long long table, long long device) {
    ++table_total;
    table_ok += table == device;
    std::printf("  table %-34s %10lld  device %10lld  %s\n", what, table, device,
                table == device ? "ok" : "MISMATCH");
  };
  check("max threads per SM", arch.max_threads_per_sm(), prop.maxThreadsPerMultiProcessor);
  check("max blocks per SM", arch.max_blocks_per_sm, prop.maxBlocksPerMultiProcessor);
  check("registers per SM", arch.registers_per_sm, prop.regsPerMultiprocessor);
  check("registers per block", arch.max_registers_per_block, prop.regsPerBlock);
  check("shared memory per SM", arch.shared_mem_per_sm, prop.sharedMemPerMultiprocessor);
  check("shared memory per block (default)", arch.shared_mem_per_block_default,
        prop.sharedMemPerBlock);
  check("shared memory per block (opt-in)", arch.shared_mem_per_block_optin,
        prop.sharedMemPerBlockOptin);
  check("driver shared memory per block", arch.reserved_shared_mem_per_block,
        prop.reservedSharedMemPerBlock);
  check("max threads per block", arch.max_threads_per_block, prop.maxThreadsPerBlock);
  std::printf("TABLE %d/%d properties agree\n", table_ok, table_total);

  std::vector<KernelVariant> kernels = AllKernels();
  std::vector<cudaFuncAttributes> attrs(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    CUDA_CHECK(cudaFuncGetAttributes(&attrs[k], kernels[k].func));
    const int max_dynamic =
        static_cast<int>(prop.sharedMemPerBlockOptin - attrs[k].sharedSizeBytes);
    CUDA_CHECK(cudaFuncSetAttribute(kernels[k].func, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    max_dynamic));
  }
  std::printf("kernels: %zu variants; registers seen:", kernels.size());
  {
    std::vector<int> seen;
    for (const auto& a : attrs) {
      bool dup = false;
      for (int s : seen) dup |= s == a.numRegs;
      if (!dup) seen.push_back(a.numRegs);
    }
    for (int s : seen) std::printf(" %d", s);
    std::printf("\n");
  }

  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto make_trial = [&]() {
    Trial t;
    t.kernel = uniform(0, static_cast<int>(kernels.size()) - 1);
    const cudaFuncAttributes& a = attrs[t.kernel];
    const int max_block = a.maxThreadsPerBlock;
    t.block = uniform(0, 1) ? uniform(1, max_block) : 32 * uniform(1, max_block / 32);
    // Some blocks over what the kernel's registers allow, to check that both reject them (not for
    // __launch_bounds__ kernels: the runtime also applies their bound, which a calculator that
    // is given only the register count cannot know).
    if (kernels[t.kernel].name.find("_lb") == std::string::npos && uniform(0, 19) == 0) {
      t.block = uniform(1, prop.maxThreadsPerBlock);
    }
    const int max_dynamic = static_cast<int>(prop.sharedMemPerBlockOptin - a.sharedSizeBytes);
    switch (uniform(0, 5)) {
      case 0:
        t.dynamic_smem = 0;
        break;
      case 1:
        t.dynamic_smem = static_cast<size_t>(uniform(0, 16 * 1024));
        break;
      case 2:
        t.dynamic_smem = static_cast<size_t>(uniform(0, 48 * 1024));
        break;
      case 3:
        t.dynamic_smem = static_cast<size_t>(1024 * uniform(0, max_dynamic / 1024));
        break;
      default:
        t.dynamic_smem = static_cast<size_t>(uniform(0, max_dynamic));
        break;
    }
    if (uniform(0, 9) < 3) {
      const int64_t config =
          arch.shared_mem_configs[uniform(0, static_cast<int>(arch.shared_mem_configs.size()) - 1)];
      t.carveout_pct = PercentFor(arch, prop.sharedMemPerMultiprocessor, config);
      if (t.carveout_pct >= 0) t.smem_config = config;
    }
    return t;
  };
  auto predict = [&](const Trial& t) {
    OccupancyInput in;
    in.block_size = t.block;
    in.registers_per_thread = attrs[t.kernel].numRegs;
    in.static_smem_bytes = static_cast<int64_t>(attrs[t.kernel].sharedSizeBytes);
    in.dynamic_smem_bytes = static_cast<int64_t>(t.dynamic_smem);
    in.smem_config_bytes = t.smem_config;
    return ComputeOccupancy(arch, in);
  };
  auto set_carveout = [&](const Trial& t) {
    CUDA_CHECK(cudaFuncSetAttribute(
        kernels[t.kernel].func, cudaFuncAttributePreferredSharedMemoryCarveout, t.carveout_pct));
  };

  if (trials > 0) {
    FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
    if (csv) {
      std::fprintf(csv,
                   "trial,kernel,registers,static_smem,block,dynamic_smem,carveout_pct,"
                   "smem_config,api_blocks,calc_blocks,calc_error,limit_regs,limit_smem,"
                   "limit_warps,limit_sm,agree\n");
    }
    int agree = 0, both_reject = 0, with_carveout = 0, with_carveout_agree = 0, shown = 0;
    for (int i = 0; i < trials; ++i) {
      const Trial t = make_trial();
      set_carveout(t);
      int api_blocks = -1;
      cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &api_blocks, kernels[t.kernel].func, t.block, t.dynamic_smem);
      if (err != cudaSuccess) {
        api_blocks = -1;
        cudaGetLastError();
      }
      StatusOr<OccupancyResult> r = predict(t);
      const bool api_rejects = api_blocks <= 0;
      const bool ok =
          r.ok() ? (!api_rejects && r->active_blocks_per_sm == api_blocks) : api_rejects;
      agree += ok;
      both_reject += ok && !r.ok();
      with_carveout += t.smem_config >= 0;
      with_carveout_agree += ok && t.smem_config >= 0;
      if (!ok && shown++ < 25) {
        std::printf(
            "DISAGREE %s regs=%d static=%zu block=%d dyn=%zu carveout=%d%%: api=%d calc=%s\n",
            kernels[t.kernel].name.c_str(), attrs[t.kernel].numRegs,
            attrs[t.kernel].sharedSizeBytes, t.block, t.dynamic_smem, t.carveout_pct, api_blocks,
            r.ok() ? std::to_string(r->active_blocks_per_sm).c_str()
                   : r.status().message().c_str());
      }
      if (csv) {
        std::fprintf(csv, "%d,%s,%d,%zu,%d,%zu,%d,%lld,%d,%d,\"%s\",%d,%d,%d,%d,%d\n", i,
                     kernels[t.kernel].name.c_str(), attrs[t.kernel].numRegs,
                     attrs[t.kernel].sharedSizeBytes, t.block, t.dynamic_smem, t.carveout_pct,
                     static_cast<long long>(t.smem_config), api_blocks,
                     r.ok() ? r->active_blocks_per_sm : -1,
                     r.ok() ? "" : r.status().message().c_str(),
                     r.ok() ? r->block_limit_registers : -1,
                     r.ok() ? r->block_limit_shared_mem_max_carveout : -1,
                     r.ok() ? r->block_limit_warps : -1, r.ok() ? r->block_limit_sm : -1, ok);
      }
      if (t.carveout_pct >= 0) set_carveout(Trial{t.kernel, 0, 0, -1, -1});
    }
    if (csv) std::fclose(csv);
    std::printf(
        "RESULT %d/%d configurations agree (%d of them rejected by both; %d/%d with a "
        "carveout preference)\n",
        agree, trials, both_reject, with_carveout_agree, with_carveout);
  }

  if (launches > 0) {
    FILE* plan = std::fopen(plan_path.empty() ? "plan.csv" : plan_path.c_str(), "w");
    std::fprintf(plan,
                 "launch,kernel,registers,static_smem,block,dynamic_smem,carveout_pct,"
                 "calc_smem_config,calc_limit_regs,calc_limit_smem,calc_limit_warps,"
                 "calc_limit_sm,calc_active_warps,calc_occupancy_pct,smem_per_block\n");
    int done = 0;
    while (done < launches) {
      Trial t = make_trial();
      if (done % 4 != 3) t.carveout_pct = -1, t.smem_config = -1;  // mostly the driver's choice
      if (t.block > attrs[t.kernel].maxThreadsPerBlock) continue;
      StatusOr<OccupancyResult> r = predict(t);
      if (!r.ok()) continue;
      set_carveout(t);
      const int grid = 2 * prop.multiProcessorCount;
      kernels[t.kernel].launch(grid, t.block, t.dynamic_smem);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      if (t.carveout_pct >= 0) set_carveout(Trial{t.kernel, 0, 0, -1, -1});
      std::fprintf(plan, "%d,%s,%d,%zu,%d,%zu,%d,%lld,%d,%d,%d,%d,%d,%.4f,%lld\n", done,
                   kernels[t.kernel].name.c_str(), attrs[t.kernel].numRegs,
                   attrs[t.kernel].sharedSizeBytes, t.block, t.dynamic_smem, t.carveout_pct,
                   static_cast<long long>(r->smem_config_bytes), r->block_limit_registers,
                   r->block_limit_shared_mem, r->block_limit_warps, r->block_limit_sm,
                   r->active_warps_per_sm, r->theoretical_occupancy_pct,
                   static_cast<long long>(r->smem_per_block));
      ++done;
    }
    std::fclose(plan);
    std::printf("launched %d configurations\n", done);
  }
  return 0;
}
