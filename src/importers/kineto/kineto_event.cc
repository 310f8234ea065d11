#include "importers/kineto/kineto_event.h"

namespace sightline::kineto {

Category ClassifyCategory(std::string_view c) {
  switch (c.size()) {
    // PyTorch 1.x (Kineto before 2022) wrote capitalised names: Kernel, Memcpy, Memset and
    // Runtime until 1.12 or 1.13, Operator until 1.10 (docs/formats/kineto.md, "Generations").
    case 6:
      if (c == "kernel" || c == "Kernel") return Category::kKernel;
      if (c == "cpu_op") return Category::kCpuOp;
      if (c == "Memcpy") return Category::kGpuMemcpy;
      if (c == "Memset") return Category::kGpuMemset;
      break;
    case 7:
      if (c == "Runtime") return Category::kCudaRuntime;
      break;
    case 8:
      if (c == "Operator") return Category::kCpuOp;
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
