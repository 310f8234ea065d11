// The top-level fields of a Kineto trace other than traceEvents:
//   deviceProperties[]  -> DeviceInfo (id, name, numSms, computeMajor/Minor, totalGlobalMem,
//                          maxThreadsPerMultiprocessor, regsPerMultiprocessor,
//                          sharedMemPerMultiprocessor (ROCm: maxSharedMemoryPerMultiProcessor),
//                          sharedMemPerBlockOptin); other device fields are dropped
//   distributedInfo     -> TraceSource rank / world_size (backend, pg_config ... dropped)
//   schemaVersion       -> TraceSource format_version
//   baseTimeNanoseconds -> added to every ts (newer Kineto writes ts relative to it)
//   cuda_runtime_version, cuda_driver_version, cupti_version -> TraceSource producer text
// Everything else (traceName, displayTimeUnit, trace_id, record_shapes, metadata ...) is ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"

namespace sightline::kineto {

struct TopLevelInfo {
  bool has_base_time = false;
  int64_t base_time_ns = 0;
  std::string schema_version;
  int64_t cuda_runtime_version = -1, cuda_driver_version = -1, cupti_version = -1;
  int32_t rank = -1, world_size = 0;
  std::vector<DeviceInfo> devices;
  int64_t invalid_devices = 0;  // deviceProperties entries without an id
};

// "PyTorch Profiler (CUDA runtime 12.4, driver 12.9, CUPTI API 22)"; the parts that are known.
std::string ProducerText(const TopLevelInfo& info);

}  // namespace sightline::kineto
