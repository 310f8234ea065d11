// The floor analysis's options (floor.h): what the trace does not say about each step's work, and
// the GPU's peaks when the table's are not wanted (the model's config itself is RunInputs::model).
// Its own header, in the common room (src/CMakeLists.txt), so that AnalyzeOptions can hold it.
#pragma once

#include <cstdint>

namespace sightline {

struct FloorOptions {
  // --batch: sequences decoded per step (every step a decode step); 0: from the iteration log.
  int64_t batch = 0;
  // --context: tokens already in each sequence's KV cache at a step; -1: from the iteration log,
  // else none read.
  int64_t context = -1;
  // --peak-bandwidth (GB/s) and --peak-tflops (dense, for the model's dtype): measured or stated
  // peaks that replace the table's (gpu_peaks.h); 0: the table's.
  double peak_bandwidth_gbps = 0;
  double peak_tflops = 0;

  // When the run has no model (RunInputs::model): a floor from the GEMM shapes the trace records
  // (record_shapes) when any of the floor's other options asks for one (docs/analyses/floor.md,
  // "Without a config"), so that the reports of traces recorded with shapes stay as they were
  // unless asked.
  bool asks_for_shapes() const {
    return batch > 0 || context >= 0 || peak_bandwidth_gbps > 0 || peak_tflops > 0;
  }
};

}  // namespace sightline
