#include "importers/kineto/kineto_metadata.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sightline::kineto {
namespace {

// "12.4" from 12040 (CUDA's 1000 * major + 10 * minor).
// "12.4" from 12040 (CUDA's 1000 * major + 10 * minor).
std::string CudaVersion(int64_t v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

}  // namespace

std::string ProducerText(const TopLevelInfo& info) {
  std::vector<std::string> parts;
  if (info.cuda_runtime_version > 0) {
    parts.push_back("CUDA runtime " + CudaVersion(info.cuda_runtime_version));
  }
  if (info.cuda_driver_version > 0) {
    parts.push_back("driver " + CudaVersion(info.cuda_driver_version));
  }
  if (info.cupti_version > 0) parts.push_back(fmt::format("CUPTI API {}", info.cupti_version));
  if (parts.empty()) return "PyTorch Profiler";
  return fmt::format("PyTorch Profiler ({})", fmt::join(parts, ", "));
}

}  // namespace sightline::kineto
