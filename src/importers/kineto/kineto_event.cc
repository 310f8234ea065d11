#include "importers/kineto/kineto_event.h"

namespace sightline::kineto {

Category ClassifyCategory(std::string_view c) {
  switch (c.size()) {
    case 6:
      if (c == "kernel" || c == "Kernel") return Category::kKernel;
      if (c == "cpu_op") return Category::kCpuOp;
      break;
    case 10:
      if (c == "gpu_memcpy") return Category::kGpuMemcpy;
      if (c == "gpu_memset") return Category::kGpuMemset;
      break;
    case 11:
      if (c == "cuda_driver") return Category::kCudaDriver;
      break;
    case 12:
      if (c == "cuda_runtime") return Category::kCudaRuntime;
      break;
    case 15:
      if (c == "user_annotation") return Category::kUserAnnotation;
      if (c == "python_function") return Category::kPythonFunction;
      break;
    default:
      break;
  }
  return Category::kOther;
}

}  // namespace sightline::kineto
