// sightline-allreduce-bench's errors and the meeting of ranks (harness.h).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.h"

namespace sightline::allreduce {

Run* g_run = nullptr;

[[noreturn]] void Fatal(const std::string& msg) {
  const int rank = g_run ? g_run->rank : 0;
  std::fprintf(stderr, "rank %d: error: %s\n", rank, msg.c_str());
  if (g_run != nullptr && rank == 0 && !g_run->opt.output.empty() && !g_run->csv.empty()) {
    const std::string partial = g_run->opt.output + ".partial";
    if (FILE* f = std::fopen(partial.c_str(), "w")) {
      std::fputs(g_run->csv.c_str(), f);
      std::fclose(f);
      std::fprintf(stderr, "rank 0: rows measured so far are in %s\n", partial.c_str());
    }
  }
  std::fflush(stderr);
  if (g_run != nullptr) g_run->boot.reset();  // rank 0 removes the rendezvous segment
  std::exit(1);
}

void FatalGpuError(const gpu::GpuError& e) { Fatal(e.Describe()); }

void CheckDeviceError(Run& r) {
  if (r.host_error->code == 2) {
    Fatal("Lamport data wait timed out after " + std::to_string(static_cast<int>(r.opt.timeout_s)) +
          " s: rank " + std::to_string(r.host_error->missing_rank) +
          "'s data did not arrive (block " + std::to_string(r.host_error->block) + ", buffer " +
          std::to_string(r.host_error->expected) + ", first word seen " +
          std::to_string(r.host_error->seen) + ")");
  }
  if (r.host_error->code != 0) {
    Fatal("device flag wait timed out after " + std::to_string(static_cast<int>(r.opt.timeout_s)) +
          " s: rank " + std::to_string(r.host_error->missing_rank) + " did not arrive (block " +
          std::to_string(r.host_error->block) + ", expected flag " +
          std::to_string(r.host_error->expected) + ", saw " + std::to_string(r.host_error->seen) +
          ")");
  }
}

void Sync(Run& r, const char* what) {
  SIGHTLINE_GPU_CHECK_OR(
      [what](const gpu::GpuError& e) { Fatal(std::string(what) + ": " + e.Describe()); },
      cudaStreamSynchronize(r.stream));
  CheckDeviceError(r);
}

void AllGather(Run& r, const void* mine, size_t bytes, std::vector<char>* all) {
  std::string err;
  if (!r.boot->AllGather(mine, bytes, all, &err)) Fatal(err);
}

ncclDataType_t NcclType(Dtype d) {
  return d == Dtype::kBf16 ? ncclBfloat16 : d == Dtype::kFp16 ? ncclFloat16 : ncclFloat32;
}

std::string Describe(const Config& c) {
  char buf[160];
  if (c.tokens > 0) {
    std::snprintf(buf, sizeof(buf), "%s hidden=%lld tokens=%lld %s %s %s", DtypeName(c.dtype),
                  static_cast<long long>(c.hidden), static_cast<long long>(c.tokens),
                  StrategyName(c.strategy), FusionName(c.fusion), ModeName(c.mode));
  } else {
    std::snprintf(buf, sizeof(buf), "%s size=%lld %s %s %s", DtypeName(c.dtype),
                  static_cast<long long>(c.bytes()), StrategyName(c.strategy), FusionName(c.fusion),
                  ModeName(c.mode));
  }
  return buf;
}

}  // namespace sightline::allreduce
