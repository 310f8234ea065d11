// Importer for PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip'd.
// Maps traceEvents by `cat` (kernel, gpu_memcpy, gpu_memset, cuda_runtime, cuda_driver, cpu_op,
// user_annotation, python_function), deviceProperties and distributedInfo into the trace model.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "importers/importer.h"
#include "model/trace.h"

namespace sightline {

bool SniffKinetoJson(std::string_view first_bytes);
StatusOr<Trace> ImportKinetoJson(const std::string& path, const ImportOptions& options);

}  // namespace sightline
