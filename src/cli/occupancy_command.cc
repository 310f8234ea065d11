// `sightline occupancy --arch sm_90 --block-size 256 --registers 64 ...`: the occupancy
// calculator (src/kernel/occupancy.h) with grid/wave analysis, advice and sweeps, rendered as text
// or JSON like `analyze`. docs/kernel/occupancy.md.
#include <cstdio>

#include "base/file_io.h"
#include "cli/commands.h"
#include "kernel/byte_size.h"
#include "kernel/gpu_arch.h"
#include "kernel/occupancy.h"
#include "kernel/occupancy_report.h"
#include "reporters/reporter.h"

namespace sightline::cli {
namespace {

struct OccupancyArgs {
  std::string arch;
  int block_size = 0;
  int registers = 0;
  std::string static_smem = "0";
  std::string dynamic_smem = "0";
  std::string smem_config;
  int64_t grid = 0;
  int sms = 0;
  std::string sweep;
  std::string format = "text";
  std::string output;
};

int RunOccupancy(const OccupancyArgs& args) {
  StatusOr<ResolvedGpu> gpu = ResolveGpu(args.arch);
  if (!gpu.ok()) return ReportError(InvalidArgumentError(gpu.status().message()));
  if (args.sms > 0) {
    gpu->sm_count = args.sms;
    gpu->gpu += " (" + std::to_string(args.sms) + " SMs given)";
  }
  OccupancyInput in;
  in.block_size = args.block_size;
  in.registers_per_thread = args.registers;
  StatusOr<int64_t> st = ParseByteSize(args.static_smem, "--static-smem");
  if (!st.ok()) return ReportError(st.status());
  StatusOr<int64_t> dyn = ParseByteSize(args.dynamic_smem, "--dynamic-smem");
  if (!dyn.ok()) return ReportError(dyn.status());
  in.static_smem_bytes = *st;
  in.dynamic_smem_bytes = *dyn;
  if (!args.smem_config.empty()) {
    StatusOr<int64_t> cfg = ParseByteSize(args.smem_config, "--smem-config");
    if (!cfg.ok()) return ReportError(cfg.status());
    in.smem_config_bytes = *cfg;
  }
  StatusOr<OccupancyResult> result = ComputeOccupancy(gpu->arch, in);
  if (!result.ok()) {
    return ReportError(result.status().WithPrefix("invalid configuration for " + gpu->arch.name));
  }
  OccupancyReportOptions options;
  options.grid_blocks = args.grid;
  if (args.sweep == "block-size") options.sweep = SweepKind::kBlockSize;
  if (args.sweep == "registers") options.sweep = SweepKind::kRegisters;
  const Report report = BuildOccupancyReport(*gpu, in, *result, options);
  const std::string out =
      args.format == "json" ? RenderJsonReport(report) : RenderTextReport(report);
  if (args.output.empty() || args.output == "-") {
    WriteToStdout(out);
    return kExitOk;
  }
  Status s = WriteFileAtomically(args.output, out);
  return s.ok() ? kExitOk : ReportError(s);
}

}  // namespace

void AddOccupancyCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<OccupancyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "occupancy",
      "Occupancy calculator: block limits (registers, shared memory, warps, blocks per SM), "
      "theoretical occupancy as Nsight Compute reports it, waves of a grid, and what would "
      "raise occupancy.");
  cmd->add_option("--arch", args->arch,
                  "Architecture or GPU: sm_70..sm_121, 9.0, or a name (" + KnownGpuNames() + ")")
      ->required();
  cmd->add_option("--block-size", args->block_size, "Threads per block")->required();
  cmd->add_option("--registers", args->registers,
                  "Registers per thread (ptxas -v, cudaFuncAttributes::numRegs, ncu)")
      ->required();
  cmd->add_option("--static-smem", args->static_smem,
                  "Static shared memory per block: bytes or K/KiB (48K = 49152)")
      ->capture_default_str();
  cmd->add_option("--dynamic-smem", args->dynamic_smem,
                  "Dynamic shared memory per block: bytes or K/KiB")
      ->capture_default_str();
  cmd->add_option("--smem-config", args->smem_config,
                  "Shared memory carveout per SM (ncu: Shared Memory Configuration Size); "
                  "default: the one the driver is expected to pick");
  cmd->add_option("--grid", args->grid, "Blocks in the grid: waves per SM and the tail effect")
      ->check(PositiveCount<int64_t>());
  cmd->add_option("--sms", args->sms, "SM count (default: the named GPU's, or a typical part's)")
      ->check(PositiveCount<int>());
  cmd->add_option("--sweep", args->sweep, "Also print occupancy over block sizes or registers")
      ->check(CLI::IsMember({"block-size", "registers"}));
  cmd->add_option("--format", args->format, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "Write the report to FILE instead of stdout");
  cmd->callback([&runner, args] { runner = [args] { return RunOccupancy(*args); }; });
}

}  // namespace sightline::cli
