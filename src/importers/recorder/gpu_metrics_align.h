// Checks, and if need be corrects, where a recording's GPU metric samples sit against its kernels.
// PM sampling stamps samples with a GPU clock; the importer first maps it like the host's
// real-time clock (the process record relates that to CUPTI's clock). Whether that holds is then
// measured from the data: the shift of the samples' time that best matches "GR Active" (the share
// of each sample the GPU had work) with the share of the sample the device's kernels and copies
// cover, judged on the samples where GR Active changes. On the H200 check recording the best shift
// was +3 us (a sample is 100 us): the real-time mapping held; a shift is applied only when it fits
// clearly better than none.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/time_units.h"

namespace sightline {

struct MetricAlignSample {
  TimeNs start_ns, end_ns;  // after the real-time mapping
  double gr_active_pct;     // "GR Active [Throughput %]"
};

struct MetricAlignment {
  bool checked = false;     // false: too few changes of GR Active to judge
  DurationNs best_ns = 0;   // the best-fitting shift found
  DurationNs shift_ns = 0;  // the one to apply: best_ns when it fits clearly better than none, or 0
  int64_t transitions = 0;  // samples the fit rested on
  double error_before = 0, error_after = 0;  // mean squared mismatch (fraction of a sample)^2
};

// `busy`: the device's kernel and copy intervals (any order, may overlap). Searches shifts within
// +-`max_shift_ns`.
MetricAlignment AlignMetricSamples(std::vector<std::pair<TimeNs, TimeNs>> busy,
                                   const std::vector<MetricAlignSample>& samples,
                                   DurationNs max_shift_ns = 20'000'000);

}  // namespace sightline
