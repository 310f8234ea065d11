// The GpuMetricsConfig row of an nsys export's TARGET_INFO_SYSTEM_ENV: a YAML document listing the
// metric sets nsys knows (per chip family), each metric with its sub-metrics and the multiplier
// that turns the stored raw value into the unit the sub-metric names (clocks are stored in Hz with
// multiplier 1e-6 for MHz; the warps sub-metrics × 0.5; percentages have none, i.e. 1). Reads only
// that subset of YAML (the structure nsys writes: block lists of maps, two spaces per level);
// anything else is ignored, so an unexpected document yields fewer multipliers, never an error.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sightline {

struct GpuMetricSet {
  std::string name;                      // "General Metrics for NVIDIA GH100 (any frequency)"
  std::vector<std::string> chips;        // "GH100"
  std::map<std::string, double> scales;  // "GPC Clock Frequency [MHz]" -> 1e-6
};

// The metric sets of the document, in order.
std::vector<GpuMetricSet> ParseGpuMetricsConfig(std::string_view yaml);

// The set whose metrics include every one of `names` ("Metric [Sub-metric]", as
// TARGET_INFO_GPU_METRICS spells them); among several, the first whose chips include `chip`, else
// the first. Null when none has them all.
const GpuMetricSet* PickGpuMetricSet(const std::vector<GpuMetricSet>& sets,
                                     const std::vector<std::string>& names, std::string_view chip);

}  // namespace sightline
