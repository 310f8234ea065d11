// nsys's GpuMetricsConfig YAML (TARGET_INFO_SYSTEM_ENV), through the subset reader the GPU-metrics
// import uses (ParseGpuMetricsConfig), then the set choice on the names it found.
// CI executions: 100000
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "importers/nsys/nsys_gpu_metrics_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<sightline::GpuMetricSet> sets =
      sightline::ParseGpuMetricsConfig(sightline::fuzz::AsView(data, size));
  std::vector<std::string> names;
  if (!sets.empty()) {
    for (const auto& [name, scale] : sets.back().scales) names.push_back(name);
  }
  (void)sightline::PickGpuMetricSet(sets, names, "GH100");
  return 0;
}
