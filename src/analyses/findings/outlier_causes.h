// What the outlier iterations' extra time went to, against a typical iteration: the part of rule
// outlier_iterations that measures (rule_outlier_iterations.cc says what it means and advises).
// Causes come from the host side (docs/metrics.md, "Host waits") and the kernels; units ns.
#pragma once

#include <string>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "base/time_units.h"
#include "facts/iterations.h"

namespace sightline {

struct OutlierCause {
  const char* key;         // evidence key, e.g. "gc_excess_ns"
  const char* label;       // evidence label
  const char* what;        // in the title: "<duration> <what> inside them"
  const char* short_name;  // in the attribution: "GC"
  DurationNs ns = 0;       // Σ over the outliers of max(0, theirs − the typical iteration's)
};

struct OutlierCauses {
  enum Index { kGc, kGilWait, kOsWait, kBlockingCalls, kKernelTime };
  std::vector<OutlierCause> causes;  // by Index
  DurationNs excess_ns = 0;          // the outliers' wall time beyond the median, summed
  DurationNs unexplained_ns = 0;     // what no cause covers
  size_t top = 0;                    // the largest cause (the first of equals)
  std::string attribution;           // "GC 120 ms (40%), ...; unexplained 20 ms (7%)"
  std::string hot_frames;            // of the unexplained part (Python samples); "" without

  // A part of the extra time: 0..1.
  double Share(DurationNs t) const {
    return excess_ns > 0 ? static_cast<double>(t) / static_cast<double>(excess_ns) : 0;
  }
};

// Measures the causes over `outliers` of `set` (the loop's thread), each against `typical`;
// `excess_ns` is their summed wall time beyond the median.
OutlierCauses MeasureOutlierCauses(AnalysisContext& context, const IterationSet& set,
                                   const Iteration& typical,
                                   const std::vector<const Iteration*>& outliers,
                                   DurationNs excess_ns);

// The (up to three) kernels whose time grew most from `typical` to `worst`, launched from the
// set's thread: "gemm_a +1.2 ms, norm +0.3 ms (new)"; "" when none grew.
std::string GrownKernels(AnalysisContext& context, const IterationSet& set,
                         const Iteration& typical, const Iteration& worst);

}  // namespace sightline
